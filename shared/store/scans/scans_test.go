package scans_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newArea is the scans area on a fresh table of its own, and the table.
func newArea(t *testing.T) (*scans.Scans, *ddb.Table) {
	t.Helper()
	tb := ddb.New(testenv.Table(t))
	return scans.New(tb, &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention}, scans.Deps{}), tb
}

const mib = 1 << 20

func newRun(id string, length, first int64, at time.Time) scans.UploadRun {
	c := scans.UploadChunk{Size: first, Digest: "d0"}
	return scans.UploadRun{RunID: id, Length: length, Offset: first, Chunks: []string{c.String()},
		Reserved: length, ExpiresAt: at.Add(24 * time.Hour).Unix()}
}

// pending is what the company's upload quota counter holds.
func pending(t *testing.T, tb *ddb.Table, company int64) int64 {
	t.Helper()
	var q scans.UploadQuota
	if err := tb.GetItemConsistent(context.Background(), scans.UploadQuotaKey(company), &q); err != nil {
		t.Fatal(err)
	}
	return q.Pending
}

// A run's chunks follow one another: the chunk at the offset read is
// taken once, a chunk written against a stale state is refused, and the
// chunk that completes the run releases its reservation.
func TestUploadRunStates(t *testing.T) {
	t.Parallel()
	st, tb := newArea(t)
	ctx := context.Background()
	t0 := time.Now()
	const id = "3f0c9a1e-6b2d-4c8e-9f7a-1d2e3c4b5a69"
	if _, err := st.GetUploadRun(ctx, 1, id, t0); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("no run yet: %v", err)
	}
	if err := st.StartUploadRun(ctx, 1, newRun(id, 10, 4, t0), 100, t0); err != nil {
		t.Fatal(err)
	}
	if err := st.StartUploadRun(ctx, 1, newRun(id, 10, 3, t0), 100, t0); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("second start: %v", err)
	}
	run, err := st.GetUploadRun(ctx, 1, id, t0)
	if err != nil || run.Offset != 4 || run.Length != 10 || len(run.Chunks) != 1 || pending(t, tb, 1) != 10 {
		t.Fatalf("started: %+v %v, pending %d", run, err, pending(t, tb, 1))
	}
	if _, err := st.GetUploadRun(ctx, 2, id, t0); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("another company's run: %v", err)
	}
	second := scans.UploadChunk{Size: 3, Digest: "d1"}
	next, err := st.AppendUploadChunk(ctx, 1, run, second, t0)
	if err != nil || next.Offset != 7 || next.Complete() {
		t.Fatalf("append: %+v %v", next, err)
	}
	if _, err := st.AppendUploadChunk(ctx, 1, run, scans.UploadChunk{Size: 2, Digest: "d2"}, t0); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("append on a stale state: %v", err)
	}
	last := scans.UploadChunk{Size: 3, Digest: "d3"}
	done, err := st.AppendUploadChunk(ctx, 1, next, last, t0)
	if err != nil || !done.Complete() || pending(t, tb, 1) != 0 {
		t.Fatalf("complete: %+v %v, pending %d", done, err, pending(t, tb, 1))
	}
	stored, err := st.GetUploadRun(ctx, 1, id, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := []scans.UploadPart{{Offset: 0, UploadChunk: scans.UploadChunk{Size: 4, Digest: "d0"}}, {Offset: 4, UploadChunk: second}, {Offset: 7, UploadChunk: last}}
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
	if _, err := st.GetUploadRun(ctx, 1, id, later); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("expired run: %v", err)
	}
	if _, err := st.AppendUploadChunk(ctx, 1, next, last, later); !errors.Is(err, ddb.ErrConflict) {
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
	t.Parallel()
	st, tb := newArea(t)
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
			var q *scans.QuotaError
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
	if len(granted) != 4 || refused != 2 || pending(t, tb, 1) != quota {
		t.Fatalf("granted %d, refused %d, pending %d", len(granted), refused, pending(t, tb, 1))
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
	if _, err := st.AppendUploadChunk(ctx, 1, run, scans.UploadChunk{Size: 16*mib - 1, Digest: "d1"}, t0); err != nil {
		t.Fatal(err)
	}
	if got := pending(t, tb, 1); got != 48*mib {
		t.Fatalf("after a complete run: %d", got)
	}
	const late = "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d"
	if err := st.StartUploadRun(ctx, 1, newRun(late, 32*mib, 1, t0), quota, t0); err == nil {
		t.Fatal("32 MiB more fit in 16 MiB")
	}
	// A day later the three incomplete runs have expired: the counter
	// still holds them until a reservation does not fit, which recounts.
	later := t0.Add(25 * time.Hour)
	if got := pending(t, tb, 1); got != 48*mib {
		t.Fatalf("before the recount: %d", got)
	}
	if err := st.StartUploadRun(ctx, 1, newRun(late, 32*mib, 1, later), quota, later); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if got := pending(t, tb, 1); got != 32*mib {
		t.Fatalf("after the recount: %d", got)
	}
	if got := pending(t, tb, 2); got != 64*mib {
		t.Fatalf("the other company: %d", got)
	}
}

// A run's source budget holds under concurrent uploads: exactly as many
// files as it allows get in, by count and by bytes, and each company and
// run has its own.
func TestReserveSource(t *testing.T) {
	t.Parallel()
	st, _ := newArea(t)
	ctx := context.Background()
	const run = "0b8f4a52-8c1e-4e7a-9d3b-2f6c5a1e0d94"
	expires := time.Now().Add(time.Hour)
	byCount := scans.SourceBudget{Files: 5, Bytes: 1 << 20}
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
			case errors.Is(err, scans.ErrBudget):
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
	byBytes := scans.SourceBudget{Files: 100, Bytes: 1000}
	if err := st.ReserveSource(ctx, 2, run, 600, byBytes, expires); err != nil {
		t.Fatal(err)
	}
	if err := st.ReserveSource(ctx, 2, run, 401, byBytes, expires); !errors.Is(err, scans.ErrBudget) {
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

// An uploaded scan's life in its area: created processing under its run
// id (one scan per run in a company; a second is ErrConflict and writes
// nothing), found by id and by run, invisible to another company, marked
// for the stalled-scan sweep until it ends; failing it ends it incomplete
// once (a second failure changes nothing) and clears the mark.
func TestScanLife(t *testing.T) {
	t.Parallel()
	st, _ := newArea(t)
	ctx := context.Background()
	const run = "7c1e4a2b-3d5f-4e6a-8b9c-0d1e2f3a4b5c"
	sc, err := st.CreateScan(ctx, scans.Scan{CompanyID: 1, ProjectID: 3, Branch: "main", Engine: "sarif", Tool: "semgrep", RunID: strings.ToUpper(run), Status: scans.ScanProcessing})
	if err != nil {
		t.Fatal(err)
	}
	if sc.RunID != run || !strings.HasPrefix(sc.Key.SK, schema.ScanSKPrefix) || sc.Key.SK != schema.ScanSKPrefix+sc.ID {
		t.Fatalf("created %+v", sc)
	}
	if _, err := st.CreateScan(ctx, scans.Scan{CompanyID: 1, ProjectID: 3, Branch: "main", RunID: run, Status: scans.ScanProcessing}); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("a second scan of the run: %v", err)
	}
	if got, err := st.ScanByRunID(ctx, 1, run); err != nil || got.ID != sc.ID {
		t.Fatalf("by run: %+v %v", got, err)
	}
	if got, err := st.GetScan(ctx, 1, strings.ToUpper(sc.ID)); err != nil || got.Status != scans.ScanProcessing {
		t.Fatalf("by id: %+v %v", got, err)
	}
	for _, read := range []func() error{
		func() error { _, err := st.GetScan(ctx, 2, sc.ID); return err },
		func() error { _, err := st.ScanByRunID(ctx, 2, run); return err },
		func() error { _, err := st.GetScan(ctx, 1, "not-a-uuid"); return err },
	} {
		if err := read(); !errors.Is(err, ddb.ErrNotFound) {
			t.Fatalf("another company's or a malformed id: %v", err)
		}
	}
	stalled, err := st.StalledScans(ctx, time.Now().Add(time.Hour), 10)
	if err != nil || len(stalled) != 1 || stalled[0].ScanID != sc.ID || stalled[0].CompanyID != 1 {
		t.Fatalf("stalled: %+v %v", stalled, err)
	}
	problems := []scans.ScanError{{ScanType: "sast", Level: "error", Message: "the report is not valid gzip"}}
	if changed, err := st.FailScan(ctx, sc, "The uploaded report could not be read", problems, nil); err != nil || !changed {
		t.Fatalf("fail: %v %v", changed, err)
	}
	if changed, err := st.FailScan(ctx, sc, "again", nil, nil); err != nil || changed {
		t.Fatalf("a second failure: %v %v", changed, err)
	}
	got, err := st.GetScan(ctx, 1, sc.ID)
	if err != nil || got.Status != scans.ScanIncomplete || got.FailedReason != "The uploaded report could not be read" || len(got.ScanErrors) != 1 {
		t.Fatalf("failed scan: %+v %v", got, err)
	}
	if stalled, err := st.StalledScans(ctx, time.Now().Add(time.Hour), 10); err != nil || len(stalled) != 0 {
		t.Fatalf("stalled after the end: %+v %v", stalled, err)
	}
	list, err := st.ListScans(ctx, 1, scans.ScanQuery{ProjectID: 3}, page.Request{Limit: 10})
	if err != nil || len(list.Items) != 1 || list.Items[0].ID != sc.ID || list.Count() != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
}

// The ingester's event source mapping selects scan items by the prefix
// the area writes them under (deployspec.IngestFilter spells it for AWS).
func TestIngestFilterSelectsScanItems(t *testing.T) {
	t.Parallel()
	var f struct {
		DynamoDB struct {
			NewImage struct {
				SK struct {
					S []struct {
						Prefix string `json:"prefix"`
					} `json:"S"`
				} `json:"SK"`
			} `json:"NewImage"`
		} `json:"dynamodb"`
	}
	if err := json.Unmarshal([]byte(deployspec.IngestFilter), &f); err != nil {
		t.Fatal(err)
	}
	if got := f.DynamoDB.NewImage.SK.S; len(got) != 1 || got[0].Prefix != schema.ScanSKPrefix {
		t.Fatalf("IngestFilter selects %+v, scans are under %q", got, schema.ScanSKPrefix)
	}
}
