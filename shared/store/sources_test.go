package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
)

// A run's source budget holds under concurrent uploads: exactly as many
// files as it allows get in, by count and by bytes, and each company and
// run has its own.
func TestReserveSource(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	const run = "0b8f4a52-8c1e-4e7a-9d3b-2f6c5a1e0d94"
	expires := time.Now().Add(time.Hour)
	byCount := store.SourceBudget{Files: 5, Bytes: 1 << 20}
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted, refused := 0, 0
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := st.ReserveSource(ctx, 1, run, 100, byCount, expires)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				granted++
			case errors.Is(err, store.ErrBudget):
				refused++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if granted != 5 || refused != 7 {
		t.Fatalf("granted %d, refused %d", granted, refused)
	}
	// By bytes: 600 + 400 fit in 1,000, one more byte does not.
	byBytes := store.SourceBudget{Files: 100, Bytes: 1000}
	if err := st.ReserveSource(ctx, 2, run, 600, byBytes, expires); err != nil {
		t.Fatal(err)
	}
	if err := st.ReserveSource(ctx, 2, run, 401, byBytes, expires); !errors.Is(err, store.ErrBudget) {
		t.Fatalf("over the bytes: %v", err)
	}
	if err := st.ReserveSource(ctx, 2, run, 400, byBytes, expires); err != nil {
		t.Fatalf("up to the bytes: %v", err)
	}
	// Another run of the company starts afresh.
	if err := st.ReserveSource(ctx, 1, "5d2e8c1a-7b4f-4a3e-8c9d-1e2f3a4b5c6d", 100, byCount, expires); err != nil {
		t.Fatalf("another run: %v", err)
	}
}
