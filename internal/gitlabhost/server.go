package gitlabhost

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/apicontract"
)

// APIPrefix is where GitLab serves its REST API, under the instance's
// address (and its relative URL root, when it has one).
const APIPrefix = "/api/v4"

// Server is a GitLab (gitlab.com or self-managed) REST API on a loopback
// address. Create it with New; it stops when the test ends.
type Server struct {
	srv       *httptest.Server
	root      string // relative URL root ("" or e.g. "/gitlab")
	validator *apicontract.Contract
	now       func() time.Time

	apicontract.Journal // the requests received, the violations found

	mu         sync.Mutex
	tokens     map[string]User
	projects   map[string]*project // by lower-cased path
	nextID     int64
	limited    int           // requests still to answer 429
	retryAfter time.Duration // the Retry-After of those answers
}

// User is a GitLab account.
type User struct {
	ID       int64
	Username string
}

// Request is one request the server received (Path escaped, as sent;
// Operation GitLab's operationId).
type Request = apicontract.Request

// Violation is a request our client sent that GitLab's description (or
// the parameters GitLab documents for it) does not allow.
type Violation = apicontract.Violation

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
	s.srv = apicontract.Loopback(t, http.HandlerFunc(s.serve))
	t.Cleanup(func() { s.srv.Close(); s.FailOnViolations(t, "gitlabhost") })
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
	rec := apicontract.NewRecorder()
	op := s.handle(rec, r, body)
	s.Record(r, body, op, rec.Status())
	rec.Flush(w)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request, body []byte) string {
	apiPath, ok := strings.CutPrefix(r.URL.EscapedPath(), s.root)
	if !ok || !strings.HasPrefix(apiPath, APIPrefix+"/") {
		s.Violate("request", r, "", fmt.Errorf("%w: outside %s%s/", ErrNotDescribed, s.root, APIPrefix))
		writeMessage(w, http.StatusNotFound, "404 Not Found")
		return ""
	}
	op, err := s.validator.Match(r, apiPath)
	if err != nil {
		s.Violate("request", r, "", err)
		writeMessage(w, http.StatusNotFound, "404 Not Found")
		return ""
	}
	if err := s.validator.ValidateRequest(r, apiPath, body, op); err != nil {
		s.Violate("request", r, op.ID, err)
		writeMessage(w, http.StatusBadRequest, "400 Bad request")
		return op.ID
	}
	if err := checkParams(op.ID, body); err != nil {
		s.Violate("request", r, op.ID, err)
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

// writeMessage is GitLab's error body: {"message": "..."}.
func writeMessage(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
