package notifications_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/notifications"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// Over the limit a caller gets 429 with Retry-After until the clock
// minute ends; the limit is per user.
func TestRateLimit(t *testing.T) {
	env := testenv.New(t)
	at := time.Date(2031, 5, 1, 9, 30, 20, 0, time.UTC) // 40 s before the minute ends
	env.Deps.Server.RateLimit = &httpapi.RateLimiter{Store: env.Store.Tenancy, Limit: tenancy.RateLimit{PerMinute: 3, PerHour: 100},
		Now: func() time.Time { return at }}
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
	if got := last.Header.Get("Retry-After"); got != "40" {
		t.Fatalf("Retry-After %q, want 40", got)
	}
	if r := testenv.Do(t, h, "GET", "/notifications/preferences", "", testenv.Key(acme.Admin)...); r.Status != 200 {
		t.Fatalf("another user is limited too: %d", r.Status)
	}
	at = at.Add(39 * time.Second)
	if r := testenv.Do(t, h, "GET", "/notifications/preferences", "", testenv.Key(member)...); r.Status != 429 || r.Header.Get("Retry-After") != "1" {
		t.Fatalf("in the minute's last second: %d, Retry-After %q", r.Status, r.Header.Get("Retry-After"))
	}
	at = at.Add(time.Second)
	if r := testenv.Do(t, h, "GET", "/notifications/preferences", "", testenv.Key(member)...); r.Status != 200 {
		t.Fatalf("in the next minute: %d", r.Status)
	}
}
