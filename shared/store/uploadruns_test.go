package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
)

const mib = 1 << 20

func newRun(id string, length, first int64, at time.Time) store.UploadRun {
	c := store.UploadChunk{Size: first, Digest: "d0"}
	return store.UploadRun{RunID: id, Length: length, Offset: first, Chunks: []string{c.String()},
		Reserved: length, ExpiresAt: at.Add(24 * time.Hour).Unix()}
}

func pending(t *testing.T, st *store.Store, company int64) int64 {
	t.Helper()
	n, err := bulkload.PendingUploadBytes(context.Background(), st, company)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A run's chunks follow one another: the chunk at the offset read is
// taken once, a chunk written against a stale state is refused, and the
// chunk that completes the run releases its reservation.
func TestUploadRunStates(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	t0 := time.Now()
	const id = "3f0c9a1e-6b2d-4c8e-9f7a-1d2e3c4b5a69"
	if _, err := st.GetUploadRun(ctx, 1, id, t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no run yet: %v", err)
	}
	if err := st.StartUploadRun(ctx, 1, newRun(id, 10, 4, t0), 100, t0); err != nil {
		t.Fatal(err)
	}
	if err := st.StartUploadRun(ctx, 1, newRun(id, 10, 3, t0), 100, t0); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second start: %v", err)
	}
	run, err := st.GetUploadRun(ctx, 1, id, t0)
	if err != nil || run.Offset != 4 || run.Length != 10 || len(run.Chunks) != 1 || pending(t, st, 1) != 10 {
		t.Fatalf("started: %+v %v, pending %d", run, err, pending(t, st, 1))
	}
	if _, err := st.GetUploadRun(ctx, 2, id, t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another company's run: %v", err)
	}
	second := store.UploadChunk{Size: 3, Digest: "d1"}
	next, err := st.AppendUploadChunk(ctx, 1, run, second, t0)
	if err != nil || next.Offset != 7 || next.Complete() {
		t.Fatalf("append: %+v %v", next, err)
	}
	if _, err := st.AppendUploadChunk(ctx, 1, run, store.UploadChunk{Size: 2, Digest: "d2"}, t0); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("append on a stale state: %v", err)
	}
	last := store.UploadChunk{Size: 3, Digest: "d3"}
	done, err := st.AppendUploadChunk(ctx, 1, next, last, t0)
	if err != nil || !done.Complete() || pending(t, st, 1) != 0 {
		t.Fatalf("complete: %+v %v, pending %d", done, err, pending(t, st, 1))
	}
	stored, err := st.GetUploadRun(ctx, 1, id, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.UploadPart{{Offset: 0, UploadChunk: store.UploadChunk{Size: 4, Digest: "d0"}}, {Offset: 4, UploadChunk: second}, {Offset: 7, UploadChunk: last}}
	parts := stored.Parts()
	if len(parts) != len(want) || parts[0] != want[0] || parts[1] != want[1] || parts[2] != want[2] {
		t.Fatalf("parts: %+v", parts)
	}
	if c, ok := stored.ChunkAt(4); !ok || c != second {
		t.Fatalf("chunk at 4: %v %v", c, ok)
	}
	if _, ok := stored.ChunkAt(5); ok {
		t.Fatal("no chunk starts at 5")
	}
	// Expired, the run is gone: appending fails, its id starts afresh.
	later := t0.Add(25 * time.Hour)
	if _, err := st.GetUploadRun(ctx, 1, id, later); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired run: %v", err)
	}
	if _, err := st.AppendUploadChunk(ctx, 1, next, last, later); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("append to an expired run: %v", err)
	}
	if err := st.StartUploadRun(ctx, 1, newRun(id, 10, 4, later), 100, later); err != nil {
		t.Fatalf("start over an expired run: %v", err)
	}
}

// The quota holds under concurrent starts, is released by a complete run,
// and no longer counts runs that expired (recounted when a reservation
// does not fit); each company has its own.
func TestUploadQuota(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	t0 := time.Now()
	const quota = 64 * mib
	ids := []string{
		"0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d", "1b2c3d4e-5f6a-4b7c-9d8e-9f0a1b2c3d4e",
		"2c3d4e5f-6a7b-4c8d-ae9f-0a1b2c3d4e5f", "3d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f6a",
		"4e5f6a7b-8c9d-4eaf-9a1b-2c3d4e5f6a7b", "5f6a7b8c-9d0e-4fb0-ab2c-3d4e5f6a7b8c",
	}
	// Six runs of 16 MiB race for 64 MiB: four get in.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var granted []string
	refused := 0
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := st.StartUploadRun(ctx, 1, newRun(id, 16*mib, 1, t0), quota, t0)
			var q *store.QuotaError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				granted = append(granted, id)
			case errors.As(err, &q):
				if q.Quota != quota || q.Need != 16*mib || q.Pending != 64*mib {
					t.Errorf("quota error: %+v", q)
				}
				refused++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(granted) != 4 || refused != 2 || pending(t, st, 1) != quota {
		t.Fatalf("granted %d, refused %d, pending %d", len(granted), refused, pending(t, st, 1))
	}
	for _, id := range ids {
		_, err := st.GetUploadRun(ctx, 1, id, t0)
		if in := slices.Contains(granted, id); in != (err == nil) {
			t.Fatalf("run %s: granted %v, read %v", id, in, err)
		}
	}
	// Another company has its own quota.
	if err := st.StartUploadRun(ctx, 2, newRun(ids[0], 64*mib, 1, t0), quota, t0); err != nil {
		t.Fatalf("another company: %v", err)
	}
	// A run completed releases its 16 MiB.
	run, err := st.GetUploadRun(ctx, 1, granted[0], t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendUploadChunk(ctx, 1, run, store.UploadChunk{Size: 16*mib - 1, Digest: "d1"}, t0); err != nil {
		t.Fatal(err)
	}
	if got := pending(t, st, 1); got != 48*mib {
		t.Fatalf("after a complete run: %d", got)
	}
	const late = "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d"
	if err := st.StartUploadRun(ctx, 1, newRun(late, 32*mib, 1, t0), quota, t0); err == nil {
		t.Fatal("32 MiB more fit in 16 MiB")
	}
	// A day later the three incomplete runs have expired: the counter
	// still holds them until a reservation does not fit, which recounts.
	later := t0.Add(25 * time.Hour)
	if got := pending(t, st, 1); got != 48*mib {
		t.Fatalf("before the recount: %d", got)
	}
	if err := st.StartUploadRun(ctx, 1, newRun(late, 32*mib, 1, later), quota, later); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if got := pending(t, st, 1); got != 32*mib {
		t.Fatalf("after the recount: %d", got)
	}
	if got := pending(t, st, 2); got != 64*mib {
		t.Fatalf("the other company: %d", got)
	}
}
