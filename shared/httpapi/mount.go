package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store"
)

// HandlerFunc is an endpoint: it writes a success response or returns an
// error that WriteError turns into the right status and body.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Server holds what every group handler needs.
type Server struct {
	Auth *auth.Authenticator
	Log  *slog.Logger
	// RateLimit, when set, limits each user's authenticated requests.
	RateLimit *RateLimiter
}

// RateLimiter counts requests per user in the store, so every Lambda
// instance (and the dev server) shares one count.
type RateLimiter struct {
	Store *store.Store
	Limit store.RateLimit
}

// ErrRateLimited answers a caller over its limit (with Retry-After).
var ErrRateLimited = Errorf(http.StatusTooManyRequests, "Rate limit exceeded")

// Group returns the http.Handler of one endpoint group: every route the
// route table gives the group, each behind request logging, panic recovery
// and the route's access rule. handlers is keyed by "METHOD /path" as in the
// table (path relative to /api/v1). A route without a handler, or a handler
// without a route, is a programming error and panics at start-up.
func (s *Server) Group(group string, handlers map[string]HandlerFunc) http.Handler {
	mounted := map[string]http.Handler{}
	for _, rt := range routes.Of(group) {
		key := rt.Method + " " + rt.Path
		h, ok := handlers[key]
		if !ok {
			panic(fmt.Sprintf("httpapi: group %s has no handler for %s", group, key))
		}
		mounted[rt.Pattern()] = s.logged(s.guarded(rt, h))
		delete(handlers, key)
	}
	for key := range handlers {
		panic(fmt.Sprintf("httpapi: group %s handler %s is not in the route table", group, key))
	}
	return Router(mounted, s.Log)
}

// guarded applies the route's access rule before calling h.
func (s *Server) guarded(rt routes.Route, h HandlerFunc) HandlerFunc {
	if rt.Access == routes.Public {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.Auth.Authenticate(r)
		if errors.Is(err, auth.ErrUnauthenticated) {
			return ErrUnauthenticated
		}
		if err != nil {
			return err
		}
		if err := s.takeRequest(w, r, p); err != nil {
			return err
		}
		switch {
		case rt.Access == routes.Admin && !p.IsAdmin:
			return ErrAdmin
		case rt.Access == routes.Permission && !p.Has(rt.Permission):
			return ErrPermission
		}
		return h(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	}
}

// takeRequest applies the rate limit. A failing counter is logged and the
// request let through: the limiter must not turn a hiccup into an outage.
func (s *Server) takeRequest(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if s.RateLimit == nil {
		return nil
	}
	ok, retry, err := s.RateLimit.Store.TakeRequest(r.Context(), p.CompanyID, p.UserID, s.RateLimit.Limit, time.Now())
	if err != nil {
		s.Log.Error("rate limit", "request_id", r.Header.Get(RequestIDHeader), "error", err.Error())
		return nil
	}
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
		return ErrRateLimited
	}
	return nil
}

// RequestIDHeader carries the request id (API Gateway's, when behind it).
const RequestIDHeader = "X-Request-Id"

// statusWriter remembers the status for the access log.
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

// logged runs h with a request id, turns its error or panic into a JSON
// response, and writes one JSON log line per request.
func (s *Server) logged(h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get(RequestIDHeader)
		if id == "" {
			id = newRequestID()
			r.Header.Set(RequestIDHeader, id)
		}
		w.Header().Set(RequestIDHeader, id)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				s.Log.Error("panic", "request_id", id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if sw.status == 0 {
					_ = WriteJSON(sw, errInternal.Status, errInternal.Body)
				}
			}
			s.Log.Info("request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
				"duration_ms", float64(time.Since(start).Microseconds())/1000, "request_id", id)
		}()
		if err := h(sw, r); err != nil {
			s.writeError(sw, id, err)
		}
	})
}

// writeError maps an error to its response. Only *Error values reach the
// client verbatim; anything else is logged and answered generically.
func (s *Server) writeError(w http.ResponseWriter, requestID string, err error) {
	var apiErr *Error
	switch {
	case errors.As(err, &apiErr):
	case store.Transient(err):
		// DynamoDB kept refusing past the store's retry budget; nothing
		// half-done was left, so the client may simply try again.
		s.Log.Warn("unavailable", "request_id", requestID, "error", err.Error())
		w.Header().Set("Retry-After", "2")
		apiErr = ErrUnavailable
	default:
		s.Log.Error("internal error", "request_id", requestID, "error", err.Error())
		apiErr = errInternal
	}
	if werr := WriteJSON(w, apiErr.Status, apiErr.Body); werr != nil {
		s.Log.Error("write response", "request_id", requestID, "error", werr.Error())
	}
}

func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Router dispatches on Go ServeMux patterns and answers requests no pattern
// matches with a JSON 404 or 405 (ServeMux's own answers are plain text),
// logging them.
func Router(handlers map[string]http.Handler, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	for pattern, h := range handlers {
		mux.Handle(pattern, h)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		id := r.Header.Get(RequestIDHeader)
		if id == "" {
			id = newRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, r)
		status, body := http.StatusNotFound, map[string]string{"error": "Route not found"}
		if rec.Code == http.StatusMethodNotAllowed {
			status, body = rec.Code, map[string]string{"error": "Method not allowed"}
			w.Header().Set("Allow", rec.Header().Get("Allow"))
		}
		_ = WriteJSON(w, status, body)
		log.Info("request", "method", r.Method, "path", r.URL.Path, "status", status,
			"duration_ms", float64(time.Since(start).Microseconds())/1000, "request_id", id)
	})
}
