package githost

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a GitHub (or GitHub Enterprise) REST API on a loopback address.
// Create it with New; it stops when the test ends.
type Server struct {
	srv       *httptest.Server
	prefix    string // "" (github.com style) or EnterprisePrefix
	validator *Validator
	now       func() time.Time

	mu         sync.Mutex
	tokens     map[string]account
	repos      map[string]*repository // by "owner/repo", lower-cased as GitHub matches names
	nextID     int64
	requests   []Request
	violations []Violation
	limits     []limitRule
}

type account struct {
	id    int64
	login string
}

// Request is one request the server received, for assertions.
type Request struct {
	Method    string
	Path      string // as sent, Enterprise prefix included
	Query     string
	Header    http.Header
	Body      []byte
	Operation string // GitHub's operationId, "" when not described
	Status    int    // what the server answered
}

// Violation is a request our client sent that GitHub's description does not
// allow (Kind "request"), or an answer of this server that the description
// does not allow (Kind "response", a bug in this package).
type Violation struct {
	Kind      string
	Method    string
	Path      string
	Operation string
	Err       string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s violation: %s %s (%s): %s", v.Kind, v.Method, v.Path, v.Operation, v.Err)
}

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
	s.srv = loopbackServer(t, http.HandlerFunc(s.serve))
	t.Cleanup(func() { s.srv.Close(); s.failOnViolations(t) })
	return s
}

// loopbackServer listens on 127.0.0.1 explicitly: tests must never open a
// port on other interfaces (httptest falls back to [::1] otherwise).
func loopbackServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("githost: listen: %v", err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	return srv
}

func (s *Server) failOnViolations(t testing.TB) {
	for _, v := range s.TakeViolations() {
		t.Errorf("githost: %s", v)
	}
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

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequestsFor returns the requests matched to one operation, e.g.
// "issues/create-comment".
func (s *Server) RequestsFor(operationID string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Operation == operationID {
			out = append(out, r)
		}
	}
	return out
}

// Violations returns the violations recorded so far.
func (s *Server) Violations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Violation(nil), s.violations...)
}

// TakeViolations returns the violations recorded so far and forgets them,
// for a test that provokes one on purpose: taken violations no longer fail
// the test at cleanup.
func (s *Server) TakeViolations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.violations
	s.violations = nil
	return out
}

func (s *Server) violate(kind string, r *http.Request, op string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = append(s.violations, Violation{Kind: kind, Method: r.Method, Path: r.URL.Path, Operation: op, Err: err.Error()})
}

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
	rec := &recorder{header: http.Header{}}
	op := s.handle(rec, r, body)
	s.record(r, body, op, rec.status)
	rec.flush(w)
}

func (s *Server) handle(w *recorder, r *http.Request, body []byte) string {
	if !s.underPrefix(r.URL.Path) {
		s.violate("request", r, "", fmt.Errorf("%w: outside the API base path %q", ErrNotDescribed, s.prefix+"/"))
		writeError(w, http.StatusNotFound, notFound)
		return ""
	}
	op, err := s.validator.Match(r)
	if err != nil {
		s.violate("request", r, "", err)
		writeError(w, http.StatusNotFound, notFound)
		return ""
	}
	if err := s.validator.validateRequest(r, body, op); err != nil {
		s.violate("request", r, op.ID, err)
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
func (s *Server) checkAnswer(r *http.Request, op Operation, w *recorder) {
	if err := s.validator.ValidateResponse(r, op, w.status, w.header, w.body.Bytes()); err != nil {
		s.violate("response", r, op.ID, err)
	}
}

func (s *Server) record(r *http.Request, body []byte, op string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(),
		Body: body, Operation: op, Status: status,
	})
}

func (s *Server) newID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return s.nextID
}

// recorder buffers an answer so it can be validated before it is sent.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
}

func (rec *recorder) Write(p []byte) (int, error) {
	rec.WriteHeader(http.StatusOK)
	return rec.body.Write(p)
}

func (rec *recorder) flush(w http.ResponseWriter) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	w.WriteHeader(rec.status)
	// A failed write means the client went away; there is no one to tell.
	_, _ = w.Write(rec.body.Bytes())
}
