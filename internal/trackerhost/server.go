package trackerhost

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// base is what both trackers share: the loopback server, the validator,
// the log of operations and the fault hooks.
type base struct {
	t         testing.TB
	srv       *httptest.Server
	validator *Validator
	mu        sync.Mutex
	ops       []string
	// failAfter makes the answer to the named operation a 502 after the
	// operation took effect (a worker killed between the far side's
	// change and our record of it), the given number of times.
	failAfter map[string]int
}

// start serves h on a loopback server checked by the validator newV
// builds (the test fails when it cannot be built).
func (b *base) start(t testing.TB, newV func() (*Validator, error), h http.Handler) {
	t.Helper()
	v, err := newV()
	if err != nil {
		t.Fatal(err)
	}
	b.t, b.validator = t, v
	b.serve(h)
}

func (b *base) serve(mux http.Handler) {
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		op, err := b.validator.Validate(r, body)
		if err != nil {
			b.t.Errorf("trackerhost: %v", err)
			writeJSON(w, http.StatusBadRequest, map[string]any{"message": "request does not match the description"})
			return
		}
		b.mu.Lock()
		b.ops = append(b.ops, op)
		b.mu.Unlock()
		r.Body = io.NopCloser(bytesReader(body))
		rec := &recorder{ResponseWriter: w}
		if b.fail(op) {
			rec.drop = true
		}
		mux.ServeHTTP(rec, r)
		if rec.drop {
			writeJSON(w, http.StatusBadGateway, map[string]any{"message": "upstream went away"})
		}
	}))
	b.t.Cleanup(b.srv.Close)
}

// fail reports (and counts down) a fault planned for op.
func (b *base) fail(op string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failAfter[op] > 0 {
		b.failAfter[op]--
		return true
	}
	return false
}

// FailAfter plans n answers of 502 to operation op (by the description's
// operation id), each after the operation took effect.
func (b *base) FailAfter(op string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failAfter == nil {
		b.failAfter = map[string]int{}
	}
	b.failAfter[op] = n
}

// Count is how many requests of operation op arrived.
func (b *base) Count(op string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, o := range b.ops {
		if o == op {
			n++
		}
	}
	return n
}

// URL is the server's base URL.
func (b *base) URL() string { return b.srv.URL }

// recorder swallows the handler's answer when the fault drops it.
type recorder struct {
	http.ResponseWriter
	drop bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.drop {
		r.ResponseWriter.WriteHeader(code)
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.drop {
		return len(p), nil
	}
	return r.ResponseWriter.Write(p)
}

func (r *recorder) Header() http.Header {
	if r.drop {
		return http.Header{}
	}
	return r.ResponseWriter.Header()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
