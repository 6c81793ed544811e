package githost

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// limitRule answers the next n authenticated requests with a rate limit.
type limitRule struct {
	n         int
	secondary bool
	status    int           // primary: 403 or 429
	reset     time.Time     // primary: X-RateLimit-Reset
	after     time.Duration // secondary: Retry-After
}

// GitHub's documented messages and documentation URLs. go-github classifies
// a 403 with X-RateLimit-Remaining: 0 as a primary limit, and a 403 whose
// documentation_url ends in "secondary-rate-limits" as a secondary one.
const (
	primaryMessage   = "API rate limit exceeded for user ID %d. If you reach out to GitHub Support for help, please include the request ID %s and timestamp %s."
	primaryDocs      = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit"
	secondaryMessage = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID %s."
	secondaryDocs    = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)

// SecondaryRateLimit answers the next n authenticated, valid requests with
// GitHub's secondary rate limit: 403, "Retry-After: 1" and the documented
// message, so a client's back-off can be tested.
func (s *Server) SecondaryRateLimit(n int) {
	s.addLimit(limitRule{n: n, secondary: true, after: time.Second})
}

// PrimaryRateLimit answers the next n authenticated, valid requests with the
// primary rate limit: status (403 or 429, GitHub sends either), headers
// X-RateLimit-Remaining: 0 and X-RateLimit-Reset at reset.
func (s *Server) PrimaryRateLimit(n, status int, reset time.Time) {
	if status != http.StatusForbidden && status != http.StatusTooManyRequests {
		panic(fmt.Sprintf("githost: a primary rate limit is answered with 403 or 429, not %d", status))
	}
	s.addLimit(limitRule{n: n, status: status, reset: reset})
}

func (s *Server) addLimit(l limitRule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = append(s.limits, l)
}

// takeLimit consumes one request's worth of the first pending rule.
func (s *Server) takeLimit() (limitRule, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.limits) > 0 && s.limits[0].n <= 0 {
		s.limits = s.limits[1:]
	}
	if len(s.limits) == 0 {
		return limitRule{}, false
	}
	s.limits[0].n--
	return s.limits[0], true
}

// applyLimit answers with a pending rate limit, if any, and says so.
func (s *Server) applyLimit(w http.ResponseWriter, user account) bool {
	l, ok := s.takeLimit()
	if !ok {
		return false
	}
	requestID := fmt.Sprintf("%04X:%06X", s.newID()%0xFFFF, s.newID())
	if l.secondary {
		w.Header().Set("Retry-After", strconv.Itoa(int(l.after/time.Second)))
		writeError(w, http.StatusForbidden, errorBody{Message: fmt.Sprintf(secondaryMessage, requestID), DocumentationURL: secondaryDocs})
		return true
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Used", "5000")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(l.reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	msg := fmt.Sprintf(primaryMessage, user.id, requestID, timestamp(s.now()))
	writeError(w, l.status, errorBody{Message: msg, DocumentationURL: primaryDocs})
	return true
}
