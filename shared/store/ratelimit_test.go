package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
)

func TestRateLimitWindows(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	lim := store.RateLimit{PerMinute: 2, PerHour: 3}
	t0 := time.Date(2026, 11, 22, 10, 0, 15, 0, time.UTC)
	key7 := store.RateSubject(7, 1)
	take := func(subject string, at time.Time) store.RateState {
		t.Helper()
		s, err := st.TakeRequest(ctx, 1, subject, lim, at)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := take(key7, t0); !s.Allowed || s.Limit != 2 || s.Remaining != 1 || s.Reset != 45*time.Second {
		t.Fatalf("first request: %+v", s)
	}
	if s := take(key7, t0); !s.Allowed || s.Remaining != 0 {
		t.Fatalf("second request: %+v", s)
	}
	if s := take(key7, t0); s.Allowed || s.Remaining != 0 || s.Reset != 45*time.Second {
		t.Fatalf("minute limit: %+v, want refused for 45s", s)
	}
	if s := take(store.RateSubject(8, 1), t0); !s.Allowed {
		t.Fatal("another key of the same user has a budget of its own")
	}
	if s := take(store.RateSubject(0, 1), t0); !s.Allowed {
		t.Fatal("the user's bearer tokens have a budget of their own")
	}
	// One left in the hour: the hour is now the window closest to exhaustion.
	if s := take(key7, t0.Add(time.Minute)); !s.Allowed || s.Limit != 3 || s.Remaining != 0 || s.Reset != 58*time.Minute+45*time.Second {
		t.Fatalf("a new minute allows again, the hour's last: %+v", s)
	}
	if s := take(key7, t0.Add(2*time.Minute)); s.Allowed || s.Reset != 57*time.Minute+45*time.Second {
		t.Fatalf("hour limit: %+v", s)
	}
	if err := st.RefundRequest(ctx, 1, key7, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if s := take(key7, t0.Add(2*time.Minute)); !s.Allowed || s.Remaining != 0 {
		t.Fatalf("a refunded request frees its place: %+v", s)
	}
	// A refund of nothing counted leaves the counters at zero.
	if err := st.RefundRequest(ctx, 1, store.RateSubject(9, 1), t0); err != nil {
		t.Fatal(err)
	}
	if s := take(store.RateSubject(9, 1), t0); !s.Allowed || s.Remaining != 1 {
		t.Fatalf("after a refund of nothing: %+v", s)
	}
	if s := take(key7, t0.Add(time.Hour)); !s.Allowed {
		t.Fatal("a new hour allows again")
	}
}
