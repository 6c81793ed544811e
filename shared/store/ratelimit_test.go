package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/testenv"
)

func TestRateLimitWindows(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	lim := store.RateLimit{PerMinute: 2, PerHour: 3}
	t0 := time.Date(2026, 11, 22, 10, 0, 15, 0, time.UTC)
	take := func(user int64, at time.Time) (bool, time.Duration) {
		t.Helper()
		ok, retry, err := st.TakeRequest(ctx, 1, user, lim, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok, retry
	}
	for i := 0; i < 2; i++ {
		if ok, _ := take(7, t0); !ok {
			t.Fatalf("request %d refused", i+1)
		}
	}
	if ok, retry := take(7, t0); ok || retry != 45*time.Second {
		t.Fatalf("minute limit: ok=%v retry=%s, want refused for 45s", ok, retry)
	}
	if ok, _ := take(8, t0); !ok {
		t.Fatal("another user has a count of its own")
	}
	if ok, _ := take(7, t0.Add(time.Minute)); !ok {
		t.Fatal("a new minute allows again")
	}
	if ok, retry := take(7, t0.Add(2*time.Minute)); ok || retry != 57*time.Minute+45*time.Second {
		t.Fatalf("hour limit: ok=%v retry=%s", ok, retry)
	}
	if ok, _ := take(7, t0.Add(time.Hour)); !ok {
		t.Fatal("a new hour allows again")
	}
}
