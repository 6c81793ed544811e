package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

const (
	// IdempotencyKeyHeader makes a creation safe to retry: the first
	// answer is kept 24 hours and replayed to a retry with the same key and
	// request.
	IdempotencyKeyHeader = "Idempotency-Key"
	// ReplayedHeader marks a replayed answer.
	ReplayedHeader = "Idempotent-Replayed"
	// MaxIdempotencyKey bounds a key (printable ASCII, no space).
	MaxIdempotencyKey = 255
	// maxKeptAnswer bounds a kept answer, well within an item's 400 KB.
	maxKeptAnswer = 256 << 10
)

var (
	errIdempotencyKey = OfKind(KindInvalid, "Idempotency-Key must be sent once, as 1 to %d printable ASCII characters without spaces", MaxIdempotencyKey)
	// ErrIdempotencyMismatch: the key was used for another request.
	ErrIdempotencyMismatch = Errorf(http.StatusUnprocessableEntity, "Idempotency-Key was already used with another request (method, path or body)")
	// ErrIdempotencyInProgress: the key's first request has not answered yet.
	ErrIdempotencyInProgress = Errorf(http.StatusConflict, "A request with this Idempotency-Key is in progress; retry after it answers")
	errSecretNotReplayed     = Errorf(http.StatusConflict, "A request with this Idempotency-Key already created the record; its answer carried a secret, which is shown only once and not kept: list the records to find it")
	errAnswerNotKept         = Errorf(http.StatusConflict, "A request with this Idempotency-Key already created the record; its answer was too large to keep: list the records to find it")
)

// keptHeaders are the answer headers a replay repeats.
var keptHeaders = []string{"Content-Type", "Location", "Cache-Control"}

// idempotent runs a creation under Idempotency-Key when the request sends
// one: the key (per company and credential) is claimed with a conditional
// write before the handler runs, so of two concurrent requests with one
// key exactly one creates; the other answers 409 at once (the client
// retries later and gets the replay). A 2xx answer is kept and replayed to
// a retry with the same request; a retry with another request is 422. A
// failed request frees the key. An answer carrying a secret is not kept:
// its replay is a 409 saying the record exists.
func (s *Server) idempotent(rt routes.Route, h HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		keys := r.Header.Values(IdempotencyKeyHeader)
		if len(keys) == 0 {
			return h(w, r)
		}
		if len(keys) > 1 || len(keys[0]) > MaxIdempotencyKey || keys[0] == "" || !printableASCII(keys[0]) {
			return errIdempotencyKey
		}
		if s.Store == nil {
			return errors.New("httpapi: Idempotency-Key sent to a server without a store")
		}
		fingerprint, err := requestFingerprint(r)
		if err != nil {
			return err
		}
		p := auth.FromContext(r.Context())
		claim, rec, err := s.Store.ClaimIdempotencyKey(r.Context(), p.CompanyID, tenancy.RateSubject(p.KeyID, p.UserID),
			keys[0], fingerprint, s.now())
		if err != nil {
			return err
		}
		if rec != nil {
			return replay(w, rt, rec, fingerprint)
		}
		buf := newBufferedWriter(w)
		herr := h(buf, r)
		ctx := context.WithoutCancel(r.Context())
		if herr != nil || buf.status < 200 || buf.status > 299 {
			if err := s.Store.ReleaseIdempotencyKey(ctx, claim); err != nil {
				s.Log.Error("release idempotency key", "request_id", r.Header.Get(RequestIDHeader), "error", Truncate(err.Error(), maxLoggedError))
			}
			if herr != nil {
				return herr
			}
			return buf.flush(w)
		}
		if err := s.Store.CompleteIdempotencyKey(ctx, claim, keptAnswer(rt, buf)); err != nil {
			// The record exists: the client gets its answer; only a retry
			// with the key would not see it.
			s.Log.Error("keep idempotent answer", "request_id", r.Header.Get(RequestIDHeader), "error", Truncate(err.Error(), maxLoggedError))
		}
		return buf.flush(w)
	}
}

func (s *Server) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// requestFingerprint hashes what makes a request the same request: its
// method, path and query, and body (as the edge read it), and leaves the
// body for the handler.
func requestFingerprint(r *http.Request) (string, error) {
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return "", err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.RequestURI() + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// keptAnswer is what a replay repeats of buf's answer.
func keptAnswer(rt routes.Route, buf *bufferedWriter) schema.IdempotentAnswer {
	a := schema.IdempotentAnswer{Status: buf.status, Header: map[string]string{}}
	for _, name := range append(keptHeaders, rt.ResponseHeaders...) {
		if v := buf.header.Get(name); v != "" {
			a.Header[name] = v
		}
	}
	if rt.SecretAnswer || buf.body.Len() > maxKeptAnswer {
		a.BodyWithheld = true
		return a
	}
	a.Body = bytes.Clone(buf.body.Bytes())
	return a
}

// replay answers a request whose key is taken.
func replay(w http.ResponseWriter, rt routes.Route, rec *tenancy.IdempotencyRecord, fingerprint string) error {
	switch {
	case rec.Fingerprint != fingerprint:
		return ErrIdempotencyMismatch
	case !rec.Done:
		w.Header().Set("Retry-After", RetryAfterSeconds)
		return ErrIdempotencyInProgress
	case rec.Answer.BodyWithheld && rt.SecretAnswer:
		return errSecretNotReplayed
	case rec.Answer.BodyWithheld:
		return errAnswerNotKept
	}
	for name, v := range rec.Answer.Header {
		w.Header().Set(name, v)
	}
	w.Header().Set(ReplayedHeader, "true")
	w.WriteHeader(rec.Answer.Status)
	_, err := w.Write(rec.Answer.Body)
	return err
}
