package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
)

// validated answers a read with a strong ETag, the SHA-256 of the body
// bytes (so it changes exactly when the answer does), and answers 304
// with no body when If-None-Match names it. A 304 costs no rate limit:
// the request, counted before the handler ran, is refunded.
func (s *Server) validated(taken *takenRequest, h HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		buf := newBufferedWriter(w)
		if err := h(buf, r); err != nil {
			return err
		}
		if buf.status != http.StatusOK {
			return buf.flush(w)
		}
		sum := sha256.Sum256(buf.body.Bytes())
		tag := `"` + base64.RawURLEncoding.EncodeToString(sum[:]) + `"`
		w.Header().Set("ETag", tag)
		// Each caller's own data: a cache may keep it for that caller only,
		// and must ask again before using it (unless the handler said more).
		if w.Header().Get("Cache-Control") == "" {
			w.Header().Set("Cache-Control", "private, no-cache")
		}
		if !noneMatch(r.Header.Values("If-None-Match"), tag) {
			return buf.flush(w)
		}
		w.Header().Del("Content-Type")
		w.Header().Del("Content-Length")
		s.refund(r.Context(), w.Header(), taken, r.Header.Get(RequestIDHeader))
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
}

// noneMatch reports whether If-None-Match (its fields, each a list) names
// tag or is "*". The comparison is weak (RFC 9110 13.1.2): W/"x" matches
// "x".
func noneMatch(fields []string, tag string) bool {
	for _, f := range fields {
		for _, t := range strings.Split(f, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == tag {
				return true
			}
		}
	}
	return false
}
