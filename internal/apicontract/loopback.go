package apicontract

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Loopback starts h on 127.0.0.1 explicitly: tests must never open a port
// on other interfaces (httptest falls back to [::1] otherwise). The caller
// closes it.
func Loopback(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("apicontract: listen: %v", err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	return srv
}

// Recorder buffers an answer so that it can be validated before it is
// sent (Flush), and keeps its status for the host's request log.
type Recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

// NewRecorder is an empty answer.
func NewRecorder() *Recorder { return &Recorder{header: http.Header{}} }

// Header is the answer's header.
func (rec *Recorder) Header() http.Header { return rec.header }

// WriteHeader keeps the first status written.
func (rec *Recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
}

// Write buffers p (status 200 unless one was written).
func (rec *Recorder) Write(p []byte) (int, error) {
	rec.WriteHeader(http.StatusOK)
	return rec.body.Write(p)
}

// Status is the answer's status (200 when none was written).
func (rec *Recorder) Status() int {
	if rec.status == 0 {
		return http.StatusOK
	}
	return rec.status
}

// Body is the buffered answer.
func (rec *Recorder) Body() []byte { return rec.body.Bytes() }

// Flush sends the buffered answer to w.
func (rec *Recorder) Flush(w http.ResponseWriter) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Status())
	// A failed write means the client went away; there is no one to tell.
	_, _ = w.Write(rec.body.Bytes())
}
