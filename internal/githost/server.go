package githost

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/apicontract"
)

// Server is a GitHub (or GitHub Enterprise) REST API on a loopback address.
// Create it with New; it stops when the test ends.
type Server struct {
	srv       *httptest.Server
	prefix    string // "" (github.com style) or EnterprisePrefix
	validator *Validator
	now       func() time.Time

	apicontract.Journal // the requests received, the violations found

	mu     sync.Mutex
	tokens map[string]account
	repos  map[string]*repository // by "owner/repo", lower-cased as GitHub matches names
	nextID int64
	limits []limitRule
}

type account struct {
	id    int64
	login string
}

// Request is one request the server received (Path as sent, Enterprise
// prefix included; Operation GitHub's operationId).
type Request = apicontract.Request

// Violation is a request our client sent that GitHub's description does not
// allow (Kind "request"), or an answer of this server that the description
// does not allow (Kind "response", a bug in this package).
type Violation = apicontract.Violation

// Option configures New.
type Option func(*Server)

// WithEnterprise serves the API under /api/v3, as GitHub Enterprise Server
// does; requests outside it are answered 404 and recorded as violations.
func WithEnterprise() Option { return func(s *Server) { s.prefix = EnterprisePrefix } }

// WithToken makes token authenticate as the user login (ids are assigned in
// order, from 1001). Without any WithToken the server accepts "test-token"
// as the user "codescan-bot".
func WithToken(token, login string) Option {
	return func(s *Server) {
		s.tokens[token] = account{id: 1001 + int64(len(s.tokens)), login: login}
	}
}

// WithClock sets the clock used for created_at and updated_at.
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// New starts a server on 127.0.0.1. At the end of the test it stops, and
// every violation not taken with TakeViolations fails the test.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	v, err := NewValidator()
	if err != nil {
		t.Fatalf("githost: %v", err)
	}
	s := &Server{validator: v, tokens: map[string]account{}, repos: map[string]*repository{}, nextID: 1_000_000}
	s.now = func() time.Time { return time.Now().UTC() }
	for _, o := range opts {
		o(s)
	}
	if len(s.tokens) == 0 {
		WithToken("test-token", "codescan-bot")(s)
	}
	s.srv = apicontract.Loopback(t, http.HandlerFunc(s.serve))
	t.Cleanup(func() { s.srv.Close(); s.FailOnViolations(t, "githost") })
	return s
}

// URL is the API base URL a client is configured with, ending in "/":
// "http://127.0.0.1:PORT/" or, with WithEnterprise, ".../api/v3/".
func (s *Server) URL() string { return s.srv.URL + s.prefix + "/" }

// HostURL is the server's origin, without the API prefix (the integration's
// base_url; URL() is base_url + gateway_prefix + "/").
func (s *Server) HostURL() string { return s.srv.URL }

// Prefix is the gateway prefix: "" or EnterprisePrefix.
func (s *Server) Prefix() string { return s.prefix }

// Client is an http.Client for this server (no proxy, loopback only).
func (s *Server) Client() *http.Client { return s.srv.Client() }

// maxBody bounds what one request may carry; GitHub refuses comment bodies
// over 65536 characters, so a few MB is plenty for anything legitimate.
const maxBody = 4 << 20

// serve is the pipeline every request goes through: record, check against
// the description, authenticate, apply injected rate limits, then answer.
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

func (s *Server) handle(w *apicontract.Recorder, r *http.Request, body []byte) string {
	if !s.underPrefix(r.URL.Path) {
		s.Violate("request", r, "", fmt.Errorf("%w: outside the API base path %q", ErrNotDescribed, s.prefix+"/"))
		writeError(w, http.StatusNotFound, notFound)
		return ""
	}
	op, err := s.validator.Match(r)
	if err != nil {
		s.Violate("request", r, "", err)
		writeError(w, http.StatusNotFound, notFound)
		return ""
	}
	if err := s.validator.contract.ValidateRequest(r, apiPath(r), body, op); err != nil {
		s.Violate("request", r, op.ID, err)
		writeValidationFailed(w, err)
		return op.ID
	}
	user, ok := s.authenticate(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, badCredentials)
		return op.ID
	}
	if s.applyLimit(w, user) {
		return op.ID
	}
	s.dispatch(w, &call{r: r, body: body, op: op, user: user})
	s.checkAnswer(r, op, w)
	return op.ID
}

// underPrefix tells whether path is inside the API: with the Enterprise
// prefix only paths under it, without it only paths not under it (a
// github.com client configured with /api/v3 would fail there too).
func (s *Server) underPrefix(path string) bool {
	if s.prefix == "" {
		return !strings.HasPrefix(path, EnterprisePrefix+"/")
	}
	return strings.HasPrefix(path, s.prefix+"/")
}

// authenticate accepts "Bearer <token>" and the older "token <token>".
func (s *Server) authenticate(r *http.Request) (account, bool) {
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(auth, "token ")
	}
	if !ok || tok == "" {
		return account{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, known := s.tokens[tok]
	return a, known
}

// checkAnswer validates the server's own answer, so that the wire format the
// client is tested against is GitHub's and not an invention of this package.
func (s *Server) checkAnswer(r *http.Request, op Operation, w *apicontract.Recorder) {
	if err := s.validator.ValidateResponse(r, op, w.Status(), w.Header(), w.Body()); err != nil {
		s.Violate("response", r, op.ID, err)
	}
}

func (s *Server) newID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return s.nextID
}
