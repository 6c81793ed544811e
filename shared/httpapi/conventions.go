package httpapi

import (
	"bytes"
	"net/http"

	"github.com/acme/codescan-api/shared/routes"
)

// conventions wraps a route's handler in the HTTP conventions its route
// takes part in: idempotent creation (Idempotency-Key) on the routes that
// create (and the idempotent writes), validators (ETag, If-None-Match) on the reads.
func (s *Server) conventions(rt routes.Route, taken *takenRequest, h HandlerFunc) HandlerFunc {
	switch {
	case rt.Creates || rt.Idempotent:
		return s.idempotent(rt, h)
	case rt.Validated():
		return s.validated(taken, h)
	}
	return h
}

// bufferedWriter holds an answer back (status and body; the headers are
// the real writer's) until the convention decides what is sent.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newBufferedWriter(w http.ResponseWriter) *bufferedWriter {
	return &bufferedWriter{header: w.Header()}
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// flush sends the held answer to w.
func (b *bufferedWriter) flush(w http.ResponseWriter) error {
	if b.status == 0 {
		return nil // nothing written: the caller's error answers
	}
	w.WriteHeader(b.status)
	_, err := w.Write(b.body.Bytes())
	return err
}
