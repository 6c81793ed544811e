package apicontract

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// Request is one request a loopback host received, for assertions.
type Request struct {
	Method    string
	Path      string // escaped, as sent (prefixes included)
	Query     string
	Header    http.Header
	Body      []byte
	Operation string // the vendor's operationId, "" when not described
	Status    int    // what the host answered
}

// Violation is a request our client sent that the vendor's description
// does not allow (Kind "request"), or an answer of the host that the
// description does not allow (Kind "response", a bug of the host).
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

// Journal is what a loopback host keeps for a test: the requests it
// received and the violations it found, in order. A host embeds it, so
// its Requests, RequestsFor, Violations and TakeViolations are the
// host's. Safe for concurrent use.
type Journal struct {
	mu         sync.Mutex
	requests   []Request
	violations []Violation
}

// Record keeps r (its body passed separately), matched to op and answered
// status.
func (j *Journal) Record(r *http.Request, body []byte, op string, status int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.requests = append(j.requests, Request{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body, Operation: op, Status: status})
}

// Violate records a violation of kind ("request" or "response") by r.
func (j *Journal) Violate(kind string, r *http.Request, op string, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.violations = append(j.violations, Violation{Kind: kind, Method: r.Method, Path: r.URL.EscapedPath(), Operation: op, Err: err.Error()})
}

// Requests returns every request received so far, in order.
func (j *Journal) Requests() []Request {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Request(nil), j.requests...)
}

// RequestsFor returns the requests matched to one operation.
func (j *Journal) RequestsFor(operationID string) []Request {
	var out []Request
	for _, r := range j.Requests() {
		if r.Operation == operationID {
			out = append(out, r)
		}
	}
	return out
}

// Violations returns the violations recorded so far.
func (j *Journal) Violations() []Violation {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Violation(nil), j.violations...)
}

// TakeViolations returns the violations recorded so far and forgets them,
// for a test that provokes one on purpose: taken violations no longer fail
// the test at cleanup.
func (j *Journal) TakeViolations() []Violation {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := j.violations
	j.violations = nil
	return out
}

// FailOnViolations fails t with every violation not taken, each named by
// host (the host's package); hosts call it when the test ends.
func (j *Journal) FailOnViolations(t testing.TB, host string) {
	for _, v := range j.TakeViolations() {
		t.Errorf("%s: %s", host, v)
	}
}
