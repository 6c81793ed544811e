package httpapi

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// RateLimiter counts requests per credential (an API key, or a user's
// bearer tokens) in the store, so every Lambda instance (and the dev
// server) shares one count.
type RateLimiter struct {
	Store RateStore
	Limit tenancy.RateLimit
	// Now is the clock of the windows (time.Now when nil; tests set it).
	Now func() time.Time
}

// Rate-limit answer headers (IETF draft-ietf-httpapi-ratelimit-headers, in
// its separate-fields form): the limit of the window closest to
// exhaustion, what is left of it, and the seconds until it ends.
const (
	HeaderRateLimit     = "RateLimit-Limit"
	HeaderRateRemaining = "RateLimit-Remaining"
	HeaderRateReset     = "RateLimit-Reset"
)

// takenRequest is a request counted against a budget, kept so that an
// answer that costs nothing (a 304) can give it back.
type takenRequest struct {
	companyID int64
	subject   string
	at        time.Time
	state     tenancy.RateState
}

// takeRequest applies the rate limit and sets the rate-limit headers. A
// failure of the counter itself lets the request through (logged, no
// headers): the limit protects, it must not take the API down with it.
func (s *Server) takeRequest(w http.ResponseWriter, r *http.Request, p *auth.Principal) (*takenRequest, error) {
	if s.RateLimit == nil {
		return nil, nil
	}
	now := time.Now
	if s.RateLimit.Now != nil {
		now = s.RateLimit.Now
	}
	t := &takenRequest{companyID: p.CompanyID, subject: tenancy.RateSubject(p.KeyID, p.UserID), at: now()}
	state, err := s.RateLimit.Store.TakeRequest(r.Context(), t.companyID, t.subject, s.RateLimit.Limit, t.at)
	if err != nil {
		s.Log.Error("rate limit", "request_id", r.Header.Get(RequestIDHeader), "error", Truncate(err.Error(), maxLoggedError))
		return nil, nil
	}
	t.state = state
	setRateHeaders(w.Header(), state)
	if !state.Allowed {
		w.Header().Set("Retry-After", w.Header().Get(HeaderRateReset))
		return nil, ErrRateLimited
	}
	return t, nil
}

// refund gives back a counted request whose answer costs nothing, and
// says so in the headers. A failed refund is logged: the caller merely
// paid for the request.
func (s *Server) refund(ctx context.Context, h http.Header, t *takenRequest, requestID string) {
	if t == nil {
		return
	}
	if err := s.RateLimit.Store.RefundRequest(context.WithoutCancel(ctx), t.companyID, t.subject, t.at); err != nil {
		s.Log.Error("rate limit refund", "request_id", requestID, "error", Truncate(err.Error(), maxLoggedError))
		return
	}
	st := t.state
	st.Remaining = min(st.Remaining+1, st.Limit)
	setRateHeaders(h, st)
}

func setRateHeaders(h http.Header, st tenancy.RateState) {
	h.Set(HeaderRateLimit, strconv.Itoa(st.Limit))
	h.Set(HeaderRateRemaining, strconv.Itoa(st.Remaining))
	h.Set(HeaderRateReset, strconv.Itoa(int(math.Ceil(st.Reset.Seconds()))))
}
