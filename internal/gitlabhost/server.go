package gitlabhost

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// APIPrefix is where GitLab serves its REST API, under the instance's
// address (and its relative URL root, when it has one).
const APIPrefix = "/api/v4"

// Server is a GitLab (gitlab.com or self-managed) REST API on a loopback
// address. Create it with New; it stops when the test ends.
type Server struct {
	srv       *httptest.Server
	root      string // relative URL root ("" or e.g. "/gitlab")
	validator *Validator
	now       func() time.Time

	mu         sync.Mutex
	tokens     map[string]User
	projects   map[string]*project // by lower-cased path
	nextID     int64
	requests   []Request
	violations []Violation
	limited    int           // requests still to answer 429
	retryAfter time.Duration // the Retry-After of those answers
}

// User is a GitLab account.
type User struct {
	ID       int64
	Username string
}

// Request is one request the server received, for assertions.
type Request struct {
	Method    string
	Path      string // escaped, as sent
	Query     string
	Header    http.Header
	Body      []byte
	Operation string // GitLab's operationId, "" when not described
	Status    int
}

// Violation is a request our client sent that GitLab's description (or
// the parameters GitLab documents for it) does not allow.
type Violation struct {
	Method, Path, Operation, Err string
}

func (v Violation) String() string {
	return fmt.Sprintf("request violation: %s %s (%s): %s", v.Method, v.Path, v.Operation, v.Err)
}

// Option configures New.
type Option func(*Server)

// WithToken makes token authenticate as user (ids from 2001 in order).
// Without any, the server accepts "glpat-test" as "codescan-bot".
func WithToken(token, username string) Option {
	return func(s *Server) { s.tokens[token] = User{ID: 2001 + int64(len(s.tokens)), Username: username} }
}

// WithRelativeRoot serves GitLab under a relative URL root such as
// "/gitlab", as a self-managed instance may be installed.
func WithRelativeRoot(root string) Option {
	return func(s *Server) { s.root = strings.TrimRight(root, "/") }
}

// New starts a server on 127.0.0.1. At the end of the test it stops, and
// every violation not taken with TakeViolations fails the test.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	v, err := NewValidator()
	if err != nil {
		t.Fatalf("gitlabhost: %v", err)
	}
	s := &Server{validator: v, tokens: map[string]User{}, projects: map[string]*project{}, nextID: 5_000_000,
		now: func() time.Time { return time.Now().UTC() }}
	for _, o := range opts {
		o(s)
	}
	if len(s.tokens) == 0 {
		WithToken("glpat-test", "codescan-bot")(s)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("gitlabhost: listen: %v", err)
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Listener.Close()
	s.srv.Listener = l
	s.srv.Start()
	t.Cleanup(func() {
		s.srv.Close()
		for _, v := range s.TakeViolations() {
			t.Errorf("gitlabhost: %s", v)
		}
	})
	return s
}

// HostURL is the instance's origin (an integration's base_url).
func (s *Server) HostURL() string { return s.srv.URL }

// Root is the relative URL root (an integration's gateway_prefix).
func (s *Server) Root() string { return s.root }

// Host is the instance's host:port, as CI_SERVER_URL names it.
func (s *Server) Host() string { return strings.TrimPrefix(s.srv.URL, "http://") }

// Account is the user a token authenticates as.
func (s *Server) Account(token string) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[token]
}

// RateLimit answers the next n requests 429 with Retry-After (and
// RateLimit-Reset), as GitLab's rate limits do.
func (s *Server) RateLimit(n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited, s.retryAfter = n, retryAfter
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequestsFor returns the requests matched to one operation.
func (s *Server) RequestsFor(operationID string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Operation == operationID {
			out = append(out, r)
		}
	}
	return out
}

// TakeViolations returns the violations recorded so far and forgets them.
func (s *Server) TakeViolations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.violations
	s.violations = nil
	return out
}

func (s *Server) violate(r *http.Request, op string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = append(s.violations, Violation{Method: r.Method, Path: r.URL.EscapedPath(), Operation: op, Err: err.Error()})
}

// maxBody bounds one request (GitLab keeps notes up to 1,000,000
// characters).
const maxBody = 4 << 20

// serve records, checks against the description, authenticates, applies
// injected rate limits, then answers.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := &recorder{ResponseWriter: w}
	op := s.handle(rec, r, body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body, Operation: op, Status: rec.status})
	s.mu.Unlock()
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request, body []byte) string {
	apiPath, ok := strings.CutPrefix(r.URL.EscapedPath(), s.root)
	if !ok || !strings.HasPrefix(apiPath, APIPrefix+"/") {
		s.violate(r, "", fmt.Errorf("%w: outside %s%s/", ErrNotDescribed, s.root, APIPrefix))
		writeMessage(w, http.StatusNotFound, "404 Not Found")
		return ""
	}
	op, err := s.validator.Match(r, apiPath)
	if err != nil {
		s.violate(r, "", err)
		writeMessage(w, http.StatusNotFound, "404 Not Found")
		return ""
	}
	if err := s.validator.Validate(r, apiPath, body, op); err != nil {
		s.violate(r, op.ID, err)
		writeMessage(w, http.StatusBadRequest, "400 Bad request")
		return op.ID
	}
	if err := checkParams(op.ID, body); err != nil {
		s.violate(r, op.ID, err)
		writeMessage(w, http.StatusBadRequest, "400 Bad request")
		return op.ID
	}
	user, ok := s.authenticate(r)
	if !ok {
		writeMessage(w, http.StatusUnauthorized, "401 Unauthorized")
		return op.ID
	}
	if s.limit(w) {
		return op.ID
	}
	s.dispatch(w, &call{r: r, body: body, op: op, user: user})
	return op.ID
}

// authenticate accepts GitLab's PRIVATE-TOKEN header and OAuth-style
// "Authorization: Bearer".
func (s *Server) authenticate(r *http.Request) (User, bool) {
	tok := r.Header.Get("PRIVATE-TOKEN")
	if tok == "" {
		tok, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.tokens[tok]
	return u, ok && tok != ""
}

// limit answers 429 as GitLab's rate limiter (Rack::Attack) does while an
// injected limit lasts.
func (s *Server) limit(w http.ResponseWriter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limited == 0 {
		return false
	}
	s.limited--
	secs := int(s.retryAfter.Seconds())
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	w.Header().Set("RateLimit-Reset", strconv.FormatInt(s.now().Add(s.retryAfter).Unix(), 10))
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = io.WriteString(w, "Retry later\n")
	return true
}

func (s *Server) newID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return s.nextID
}

// recorder keeps the status an answer was given.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(p)
}

// writeMessage is GitLab's error body: {"message": "..."}.
func writeMessage(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
