package notifications_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/acme/codescan-api/functions/notifications"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/testenv"
)

// Over the limit a caller gets 429 with Retry-After; the limit is per user.
func TestRateLimit(t *testing.T) {
	env := testenv.New(t)
	env.Deps.Server.RateLimit = &httpapi.RateLimiter{Store: env.Store, Limit: store.RateLimit{PerMinute: 3, PerHour: 100}}
	h := notifications.New(env.Deps)
	acme := env.Company(t, "Acme")
	member := env.User(t, acme, testenv.UserSpec{Email: "dev@acme.test"})

	var last *testenv.Response
	for i := 0; i < 4; i++ {
		last = testenv.Do(t, h, "GET", "/notifications/preferences", "", testenv.Key(member)...)
	}
	if last.Status != 429 || strings.TrimSpace(string(last.Body)) != `{"error":"Rate limit exceeded"}` {
		t.Fatalf("4th request: %d %s", last.Status, last.Body)
	}
	if s, err := strconv.Atoi(last.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Fatalf("Retry-After %q", last.Header.Get("Retry-After"))
	}
	if r := testenv.Do(t, h, "GET", "/notifications/preferences", "", testenv.Key(acme.Admin)...); r.Status != 200 {
		t.Fatalf("another user is limited too: %d", r.Status)
	}
}
