package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/metrics"
	"github.com/acme/codescan-api/shared/routes"
)

// HandlerFunc is an endpoint: it writes a success response or returns an
// error that the error model (classify) turns into status and body.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Server holds what every group handler needs.
type Server struct {
	Auth *auth.Authenticator
	Log  *slog.Logger
	// RateLimit, when set, limits each credential's authenticated requests.
	RateLimit *RateLimiter
	// Store keeps the answers of creations sent with Idempotency-Key
	// (see idempotency.go).
	Store IdempotencyStore
	// Now is the clock of the Idempotency-Key claims (time.Now when nil;
	// tests set it).
	Now func() time.Time
	// Metrics receives the edge's metrics (429s and 503s by group); nil
	// emits none.
	Metrics *metrics.Emitter
}

// Group returns the http.Handler of one endpoint group: every route the
// route table gives the group, each behind request logging, panic recovery,
// the edge checks and the route's access rule. handlers is keyed by
// "METHOD /path" as in the table (path relative to /api/v1). A route without
// a handler, or a handler without a route, is a programming error and
// panics at start-up.
func (s *Server) Group(group string, handlers map[string]HandlerFunc) http.Handler {
	mounted := map[string]http.Handler{}
	for _, rt := range routes.Of(group) {
		key := rt.Method + " " + rt.Path
		h, ok := handlers[key]
		if !ok {
			panic(fmt.Sprintf("httpapi: group %s has no handler for %s", group, key))
		}
		mounted[rt.Pattern()] = s.serve(rt, h)
		delete(handlers, key)
	}
	for key := range handlers {
		panic(fmt.Sprintf("httpapi: group %s handler %s is not in the route table", group, key))
	}
	return Router(mounted, s.Log)
}

// serve runs one request of a route: the edge checks (one credential, a
// known Content-Encoding), the access rule, the declared parameters, then
// the handler; every error goes through writeError, in the route's one
// error form.
func (s *Server) serve(rt routes.Route, h HandlerFunc) http.Handler {
	return s.logged(rt, func(w http.ResponseWriter, r *http.Request) error {
		if err := checkCredentials(r); err != nil {
			return err
		}
		if err := decodeBody(r, rt.BodyLimit(), rt.DecodedLimit()); err != nil {
			return err
		}
		// A path token is a parameter before it is a credential: its shape
		// is checked before it is looked up.
		if rt.Access == routes.PathToken {
			if err := checkParams(rt, r); err != nil {
				return err
			}
		}
		var taken *takenRequest
		if rt.Access != routes.Public {
			p, t, err := s.admit(w, r, rt)
			if err != nil {
				return err
			}
			taken = t
			r = r.WithContext(auth.WithPrincipal(r.Context(), p))
			noteCaller(r.Context(), p)
		}
		if err := checkParams(rt, r); err != nil {
			return err
		}
		if err := checkBody(rt, r); err != nil {
			return err
		}
		return s.conventions(rt, taken, h)(w, r)
	})
}

// admit authenticates the caller, counts the request against its rate
// limit (the count is returned, for a refund) and applies the route's
// access rule.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, rt routes.Route) (*auth.Principal, *takenRequest, error) {
	var p *auth.Principal
	var err error
	if rt.Access == routes.PathToken {
		p, err = s.Auth.AuthenticateKey(r.Context(), r.PathValue(routes.TokenParam))
	} else {
		p, err = s.Auth.Authenticate(r)
	}
	if errors.Is(err, auth.ErrUnauthenticated) {
		return nil, nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, nil, err
	}
	taken, err := s.takeRequest(w, r, p)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case rt.Access == routes.Admin && !p.IsAdmin:
		return nil, nil, ErrAdmin
	case rt.Access == routes.Permission && !p.Has(rt.Permission):
		return nil, nil, ErrPermission
	}
	return p, taken, nil
}

// RequestIDHeader carries the request id (API Gateway's, or a new one).
const RequestIDHeader = "X-Request-Id"

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Bounds of what one request writes to the log: user values (the path, a
// parameter) are quoted truncated, causes too.
const (
	maxLoggedValue = 256
	maxLoggedError = 1024
	maxLoggedStack = 4096
)

// logPath returns, for a route whose path carries a credential, the path
// its log lines show instead of the request's (the credential replaced);
// "" for every other route.
func logPath(rt routes.Route) string {
	if rt.Access != routes.PathToken {
		return ""
	}
	return strings.ReplaceAll(rt.FullPath(), "{"+routes.TokenParam+"}", "[redacted]")
}

// logged gives each request an id (kept from the X-Request-Id header when
// the caller or API Gateway set one), logs one line per request (see
// accessLog), turns errors into answers in the route's form and a panic
// into a generic 500.
func (s *Server) logged(rt routes.Route, h HandlerFunc) http.Handler {
	form, shown, pattern := rt.Errors, logPath(rt), rt.Pattern()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestID(r)
		c := &caller{}
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
		r.Header.Set(RequestIDHeader, id)
		w.Header().Set(RequestIDHeader, id)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				s.Log.Error("panic", "request_id", id, "panic", Truncate(fmt.Sprint(v), maxLoggedError),
					"stack", Truncate(string(debug.Stack()), maxLoggedStack))
				if sw.status == 0 {
					s.writeError(sw, id, form, errInternal)
				}
			}
			s.accessLog(r, rt.Group, shown, pattern, c, sw.status, start, id)
		}()
		if err := h(sw, r); err != nil {
			s.writeError(sw, id, form, err)
		}
	})
}

// requestID is the caller's X-Request-Id when it is a sane token, else a
// new one.
func requestID(r *http.Request) string {
	id := r.Header.Get(RequestIDHeader)
	if id == "" || len(id) > 128 || !printableASCII(id) {
		return newRequestID()
	}
	return id
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// writeError answers err through the error model, in the form given:
// client errors with their message, internal errors logged with the
// request id and their cause and answered generically, transient store
// failures 503 with Retry-After.
func (s *Server) writeError(w http.ResponseWriter, requestID string, form routes.ErrorForm, err error) {
	e, internal := classify(err)
	switch {
	case internal:
		s.Log.Error("internal error", "request_id", requestID, "error", Truncate(err.Error(), maxLoggedError))
	case e.Status == http.StatusServiceUnavailable:
		s.Log.Warn("unavailable", "request_id", requestID, "error", Truncate(err.Error(), maxLoggedError))
		w.Header().Set("Retry-After", RetryAfterSeconds)
	}
	if werr := WriteJSON(w, e.Status, errorBody(e, form)); werr != nil {
		s.Log.Error("write response", "request_id", requestID, "error", Truncate(werr.Error(), maxLoggedError))
	}
}

// errorBody is an error's answer in a route's error form; a missing or
// invalid credential is {"error"} on every route, as the spec says.
func errorBody(e *Error, form routes.ErrorForm) any {
	switch {
	case e.Body != nil:
		return e.Body
	case e.Status == http.StatusUnauthorized:
		// The contract gives one credential error body to every route.
		return map[string]string{"error": e.Message}
	case e.upload || form == routes.StatusMessage:
		return map[string]string{"status": "error", "message": e.Message}
	case form == routes.BlockOnMessage:
		return map[string]any{"message": e.Message, "unknown_slugs": []string{}, "inactive_slugs": []string{}, "non_ci_slugs": []string{}}
	}
	return map[string]string{"error": e.Message}
}

// Truncate cuts s to at most n bytes (on a rune boundary) and says how long
// it was, so a log line quotes a user value without growing with it.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:cut], len(s))
}

func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Router serves handlers keyed by ServeMux pattern and answers what matches
// no pattern itself: 404 `{"error":"Route not found"}`, or 405
// `{"error":"Method not allowed"}` with Allow when only the method is wrong
// (ServeMux would answer plain text), in the error form of the routes of
// that path. Those answers are logged like any request.
func Router(handlers map[string]http.Handler, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	for pattern, h := range handlers {
		mux.Handle(pattern, h)
	}
	// paths matches a path whatever the method, to answer a wrong method
	// in the error form of the path's routes.
	paths, forms := http.NewServeMux(), map[string]routes.ErrorForm{}
	for _, rt := range routes.Table {
		if _, ok := forms[rt.FullPath()]; !ok {
			paths.Handle(rt.FullPath(), http.NotFoundHandler())
			forms[rt.FullPath()] = rt.Errors
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		id := requestID(r)
		w.Header().Set(RequestIDHeader, id)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// ServeMux's own answer tells a wrong method (405, with Allow) from
		// an unknown path; only its status and Allow are kept.
		probe := &probeWriter{header: http.Header{}}
		h.ServeHTTP(probe, r)
		status, e, form := http.StatusNotFound, &Error{Message: "Route not found"}, routes.ErrorField
		if probe.status == http.StatusMethodNotAllowed {
			status, e.Message = probe.status, "Method not allowed"
			w.Header().Set("Allow", probe.header.Get("Allow"))
			_, path := paths.Handler(r)
			form = forms[path]
		}
		_ = WriteJSON(w, status, errorBody(e, form))
		logUnrouted(log, r, status, start, id)
	})
}

// probeWriter records the status and headers of ServeMux's fallback answer
// and drops its body.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header { return p.header }
func (p *probeWriter) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}
func (p *probeWriter) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}
