package uploads_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/uploads"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
)

// chunker sends chunks of one run of a report to a handler.
type chunker struct {
	h      http.Handler
	u      testenv.User
	run    string
	report []byte
}

func (c chunker) query() string {
	return "/scan-upload?engine=sarif&project=chunks&branch=main&run_id=" + c.run
}

// send posts report[off:end] announcing the report's length.
func (c chunker) send(t *testing.T, off, end int) *testenv.Response {
	t.Helper()
	return c.sendAs(t, off, c.report[off:end], len(c.report))
}

// sendAs posts body at off announcing length.
func (c chunker) sendAs(t *testing.T, off int, body []byte, length int) *testenv.Response {
	t.Helper()
	return testenv.DoBytes(t, c.h, "POST", c.query(), body, append(testenv.Key(c.u),
		"Content-Type", "application/json", "Upload-Offset", strconv.Itoa(off), "Upload-Length", strconv.Itoa(length))...)
}

// want fails the test unless res has the status, body and Upload-Offset
// (none when offset is "").
func want(t *testing.T, what string, res *testenv.Response, status int, body, offset string) {
	t.Helper()
	if res.Status != status || !jsonEqual(t, res.Body, body) || res.Header.Get("Upload-Offset") != offset {
		t.Fatalf("%s: %d %s (Upload-Offset %q), want %d %s (%q)", what, res.Status, res.Body, res.Header.Get("Upload-Offset"), status, body, offset)
	}
}

func uploadError(msg string) string { return fmt.Sprintf(`{"status":"error","message":%q}`, msg) }

func chunkOK(end, length int) string {
	return fmt.Sprintf(`{"status":"ok","upload_offset":%d,"upload_length":%d}`, end, length)
}

// stored is the object of the run's chunk at off, nil when there is none.
func stored(t *testing.T, company int64, run string, length, off int) []byte {
	t.Helper()
	b, err := testenv.Reports(t).Get(context.Background(), reportstore.ChunkKey(company, run, int64(length), int64(off)), 64<<20)
	if errors.Is(err, reportstore.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pendingBytes(t *testing.T, st *store.Store, company int64) int64 {
	t.Helper()
	n, err := bulkload.PendingUploadBytes(context.Background(), st, company)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A run that has its scan takes no more chunks: 409 naming the scan,
// whatever the chunk, except its final chunk sent again, which answers
// exactly what it did the first time; a run whose scan came from a whole
// upload refuses chunks the same way. Nothing stored changes.
func TestChunkedRunWithScan(t *testing.T) {
	t.Parallel()
	w := quietWorld(t)
	c := chunker{h: w.up, u: w.uploader, run: newRun(), report: generated(20)}
	n := len(c.report)
	third := n / 3
	want(t, "chunk 0", c.send(t, 0, third), 200, chunkOK(third, n), strconv.Itoa(third))
	want(t, "chunk 1", c.send(t, third, 2*third), 200, chunkOK(2*third, n), strconv.Itoa(2*third))
	first := c.send(t, 2*third, n)
	var up scanResult
	first.Decode(t, &up)
	if first.Status != 200 || up.ScanID == "" || first.Header.Get("Upload-Offset") != strconv.Itoa(n) {
		t.Fatalf("final chunk: %d %s", first.Status, first.Body)
	}
	if got := pendingBytes(t, w.env.Store, w.company.ID); got != 0 {
		t.Fatalf("pending after the run completed: %d", got)
	}
	for range 2 {
		again := c.send(t, 2*third, n)
		if again.Status != 200 || string(again.Body) != string(first.Body) || again.Header.Get("Upload-Offset") != strconv.Itoa(n) {
			t.Fatalf("final chunk again: %d %s, first %s", again.Status, again.Body, first.Body)
		}
	}
	named := uploadError(fmt.Sprintf("run_id %s already has its scan %s; a new report needs a new run_id", c.run, up.ScanID))
	want(t, "chunk 0 again", c.send(t, 0, third), 409, named, "")
	want(t, "chunk 1 again", c.send(t, third, 2*third), 409, named, "")
	want(t, "another chunk at 0", c.sendAs(t, 0, []byte(`{"version":"2.1.0"`), n), 409, named, "")
	want(t, "another length", c.sendAs(t, 0, c.report[:third], n+1), 409, named, "")
	want(t, "the final chunk shorter", c.sendAs(t, 2*third+1, c.report[2*third+1:], n), 409, named, "")
	if got := stored(t, w.company.ID, c.run, n, 0); string(got) != string(c.report[:third]) {
		t.Fatalf("chunk 0 changed: %q", got)
	}
	sc, err := w.env.Store.Scans.ScanByRunID(context.Background(), w.company.ID, c.run)
	if sum := sha256.Sum256(c.report); err != nil || sc.ReportSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("scan: %+v %v", sc, err)
	}

	// A run uploaded whole takes no chunk either.
	whole := chunker{h: w.up, u: w.uploader, run: newRun(), report: generated(5)}
	res := w.upload(t, w.uploader, "engine=sarif&project=chunks&run_id="+whole.run, whole.report)
	var wholeUp scanResult
	res.Decode(t, &wholeUp)
	if res.Status != 200 {
		t.Fatalf("whole upload: %d %s", res.Status, res.Body)
	}
	want(t, "a chunk of a run uploaded whole", whole.send(t, 0, 10), 409,
		uploadError(fmt.Sprintf("run_id %s already has its scan %s; a new report needs a new run_id", whole.run, wholeUp.ScanID)), "")
	if got := stored(t, w.company.ID, whole.run, len(whole.report), 0); got != nil {
		t.Fatalf("stored a refused chunk: %q", got)
	}
	if _, err := w.env.Store.Scans.GetUploadRun(context.Background(), w.company.ID, whole.run, time.Now()); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("a refused chunk started a run: %v", err)
	}
}

// The final chunk of a report that is refused is refused the same when
// sent again; a complete run holds no quota whatever its report.
func TestChunkedRunRefusedReport(t *testing.T) {
	t.Parallel()
	w := quietWorld(t)
	c := chunker{h: w.up, u: w.uploader, run: newRun(), report: []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[}]}`)}
	n := len(c.report)
	want(t, "chunk 0", c.send(t, 0, 10), 200, chunkOK(10, n), "10")
	first := c.send(t, 10, n)
	if first.Status != 400 {
		t.Fatalf("final chunk of a broken report: %d %s", first.Status, first.Body)
	}
	for range 2 {
		again := c.send(t, 10, n)
		if again.Status != first.Status || string(again.Body) != string(first.Body) {
			t.Fatalf("final chunk again: %d %s, first %d %s", again.Status, again.Body, first.Status, first.Body)
		}
	}
	want(t, "another chunk", c.sendAs(t, 10, []byte(`"runs":[]}`), n), 409,
		uploadError(fmt.Sprintf("All %d bytes of run_id %s were received; only its final chunk may be sent again", n, c.run)), strconv.Itoa(n))
	if got := pendingBytes(t, w.env.Store, w.company.ID); got != 0 {
		t.Fatalf("pending: %d", got)
	}
	if _, err := w.env.Store.Scans.ScanByRunID(context.Background(), w.company.ID, c.run); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("a refused report made a scan: %v", err)
	}
}

// Concurrent chunks at one offset, each of its own size: exactly one is
// taken (200 with the offset after it); the others are 409 saying the
// offset now reached, and store nothing. The run then completes with the
// bytes of the chunks taken. Run with -count and -race to shake it.
func TestConcurrentChunksAtOneOffset(t *testing.T) {
	t.Parallel()
	w := quietWorld(t)
	c := chunker{h: w.up, u: w.uploader, run: newRun(), report: generated(40)}
	n := len(c.report)
	const racers = 8
	race := func(off int) int {
		t.Helper()
		results := make([]*testenv.Response, racers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i] = c.send(t, off, off+100+37*i)
			}()
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		won := -1
		for i, res := range results {
			if res.Status/100 == 2 {
				if won >= 0 {
					t.Fatalf("chunks %d and %d at offset %d both taken: %s, %s", won, i, off, results[won].Body, res.Body)
				}
				won = i
			}
		}
		if won < 0 {
			t.Fatalf("no chunk at offset %d taken: %s", off, results[0].Body)
		}
		end := off + 100 + 37*won
		want(t, "taken", results[won], 200, chunkOK(end, n), strconv.Itoa(end))
		for i, res := range results {
			if i != won {
				want(t, fmt.Sprintf("racer %d", i), res, 409,
					uploadError(fmt.Sprintf("Other bytes were already received at offset %d; resume at offset %d", off, end)), strconv.Itoa(end))
			}
		}
		if got := stored(t, w.company.ID, c.run, n, off); string(got) != string(c.report[off:end]) {
			t.Fatalf("chunk at %d holds %d bytes, want the %d taken", off, len(got), end-off)
		}
		return end
	}
	mid := race(0)
	if got := pendingBytes(t, w.env.Store, w.company.ID); got != 1<<20 {
		t.Fatalf("pending after the first chunks: %d (one reservation of 1 MiB)", got)
	}
	last := race(mid)
	res := c.send(t, last, n)
	var up scanResult
	res.Decode(t, &up)
	if res.Status != 200 || up.ScanID == "" {
		t.Fatalf("final chunk: %d %s", res.Status, res.Body)
	}
	sc, err := w.env.Store.Scans.ScanByRunID(context.Background(), w.company.ID, c.run)
	if sum := sha256.Sum256(c.report); err != nil || sc.ReportSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("the report assembled is not the one sent: %+v %v", sc, err)
	}
	if got := pendingBytes(t, w.env.Store, w.company.ID); got != 0 {
		t.Fatalf("pending after the run completed: %d", got)
	}
}

// A company's unfinished chunked uploads hold at most its quota: a run
// that does not fit is refused at its first chunk (413, the quota in the
// message) and stores nothing; a run that completes gives its share back;
// another company has its own quota.
func TestPendingUploadQuota(t *testing.T) {
	t.Parallel()
	w := quietWorld(t)
	h := uploads.NewWithOptions(w.env.Deps, uploads.Options{PendingQuota: 64 << 20})
	// First chunks of 64 KiB: a report comes in at most 1,024 chunks.
	opening := append([]byte(`{"version":`), bytes.Repeat([]byte(" "), 64<<10)...)
	big := chunker{h: h, u: w.uploader, run: newRun()}
	want(t, "63 MiB run", big.sendAs(t, 0, opening, 63<<20), 200, chunkOK(len(opening), 63<<20), strconv.Itoa(len(opening)))
	small := chunker{h: h, u: w.uploader, run: newRun(), report: generated(10)}
	n := len(small.report)
	want(t, "small run", small.send(t, 0, n/2), 200, chunkOK(n/2, n), strconv.Itoa(n/2))
	if got := pendingBytes(t, w.env.Store, w.company.ID); got != 64<<20 {
		t.Fatalf("pending: %d", got)
	}
	third := chunker{h: h, u: w.uploader, run: newRun(), report: generated(12)}
	full := uploadError("Unfinished chunked uploads of the company hold 64 MiB of its 64 MiB quota, and this one needs 1 MiB: retry when some complete (or expire, 1 day after their first chunk)")
	want(t, "past the quota", third.send(t, 0, 100), 413, full, "")
	if _, err := w.env.Store.Scans.GetUploadRun(context.Background(), w.company.ID, third.run, time.Now()); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("a refused run was stored: %v", err)
	}
	if got := stored(t, w.company.ID, third.run, len(third.report), 0); got != nil {
		t.Fatalf("a refused chunk was stored: %q", got)
	}
	if got := pendingBytes(t, w.env.Store, w.company.ID); got != 64<<20 {
		t.Fatalf("pending after the refusal: %d", got)
	}
	// Another company is not affected.
	other := w.env.Company(t, "Globex")
	otherUploader := w.env.User(t, other, testenv.UserSpec{Email: "ci@globex.test", Permissions: []string{routes.PermUploadScan}})
	elsewhere := chunker{h: h, u: otherUploader, run: newRun()}
	want(t, "another company", elsewhere.sendAs(t, 0, opening, 64<<20), 200, chunkOK(len(opening), 64<<20), strconv.Itoa(len(opening)))
	// The small run completes and gives its 1 MiB back: the third fits.
	res := small.send(t, n/2, n)
	if res.Status != 200 {
		t.Fatalf("small run's final chunk: %d %s", res.Status, res.Body)
	}
	if got := pendingBytes(t, w.env.Store, w.company.ID); got != 63<<20 {
		t.Fatalf("pending after the small run: %d", got)
	}
	want(t, "third run, now", third.send(t, 0, 100), 200, chunkOK(100, len(third.report)), "100")
}

// A run's chunks must keep its Upload-Length and follow one another.
func TestChunkOrder(t *testing.T) {
	t.Parallel()
	w := quietWorld(t)
	c := chunker{h: w.up, u: w.uploader, run: newRun(), report: generated(30)}
	n := len(c.report)
	want(t, "chunk 0", c.send(t, 0, 100), 200, chunkOK(100, n), "100")
	want(t, "chunk 0 again", c.send(t, 0, 100), 200, chunkOK(100, n), "100")
	want(t, "chunk 0 longer", c.send(t, 0, 150), 409, uploadError("Other bytes were already received at offset 0; resume at offset 100"), "100")
	want(t, "inside chunk 0", c.send(t, 50, 150), 409, uploadError("Other bytes were already received at offset 50; resume at offset 100"), "100")
	want(t, "a gap", c.send(t, 150, 200), 409, uploadError("Expected the chunk at offset 100"), "100")
	want(t, "another length", c.sendAs(t, 100, c.report[100:200], n+1), 409,
		uploadError(fmt.Sprintf("run_id %s is an upload of %d bytes (Upload-Length); resume at offset 100", c.run, n)), "100")
	want(t, "chunk 1", c.send(t, 100, 200), 200, chunkOK(200, n), "200")
	if got := stored(t, w.company.ID, c.run, n, 0); string(got) != string(c.report[:100]) {
		t.Fatalf("chunk 0 holds %q", got)
	}
	if res := c.send(t, 200, n); res.Status != 200 {
		t.Fatalf("final chunk: %d %s", res.Status, res.Body)
	}
}

// failingPut is a bucket whose Put of one key fails once.
type failingPut struct {
	reportstore.Store
	mu   sync.Mutex
	key  string
	done bool
}

func (f *failingPut) Put(ctx context.Context, key string, body []byte) error {
	f.mu.Lock()
	fail := key == f.key && !f.done
	f.done = f.done || fail
	f.mu.Unlock()
	if fail {
		return errors.New("injected: bucket unavailable")
	}
	return f.Store.Put(ctx, key, body)
}

// A chunk the run took but whose object was not written (the bucket
// failed after the table's write) is asked for again when the report is
// assembled; sent again, it is stored, and the final chunk sent again
// completes the run.
func TestChunkLostAfterTaken(t *testing.T) {
	t.Parallel()
	w := quietWorld(t)
	c := chunker{u: w.uploader, run: newRun(), report: generated(20)}
	n := len(c.report)
	deps := w.env.Deps
	deps.Reports = &failingPut{Store: w.env.Deps.Reports, key: reportstore.ChunkKey(w.company.ID, c.run, int64(n), 100)}
	c.h = uploads.NewWithOptions(deps, uploads.Options{PendingQuota: uploads.DefaultPendingQuota})
	want(t, "chunk 0", c.send(t, 0, 100), 200, chunkOK(100, n), "100")
	if res := c.send(t, 100, 200); res.Status != 500 {
		t.Fatalf("chunk 1, the bucket failing: %d %s", res.Status, res.Body)
	}
	want(t, "final chunk", c.send(t, 200, n), 409,
		uploadError(fmt.Sprintf("The chunk at offset 100 of run_id %s is missing; send it again", c.run)), "100")
	want(t, "chunk 1 again", c.send(t, 100, 200), 200, chunkOK(200, n), "200")
	res := c.send(t, 200, n)
	var up scanResult
	res.Decode(t, &up)
	if res.Status != 200 || up.ScanID == "" {
		t.Fatalf("final chunk again: %d %s", res.Status, res.Body)
	}
	sc, err := w.env.Store.Scans.ScanByRunID(context.Background(), w.company.ID, c.run)
	if sum := sha256.Sum256(c.report); err != nil || sc.ReportSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("the report assembled is not the one sent: %+v %v", sc, err)
	}
}

// A chunked run lives ChunkDays from its first chunk, on the group's
// clock: a chunk in its last second continues it; from its end on the run
// is gone and the next chunk must start it again at offset 0.
func TestChunkedRunExpiresOnTheClock(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	at := time.Now().UTC().Truncate(time.Second)
	env.Deps.Now = func() time.Time { return at }
	w := &world{env: env, up: uploads.New(env.Deps), company: env.Company(t, "Acme")}
	w.uploader = env.User(t, w.company, testenv.UserSpec{Email: "ci@acme.test", Permissions: []string{routes.PermUploadScan}})
	c := chunker{h: w.up, u: w.uploader, run: newRun(), report: generated(20)}
	n := len(c.report)
	third := n / 3
	want(t, "chunk 0", c.send(t, 0, third), 200, chunkOK(third, n), strconv.Itoa(third))
	end := at.Add(reportstore.ChunkDays * 24 * time.Hour)
	at = end.Add(-time.Second)
	want(t, "chunk 1 in the run's last second", c.send(t, third, 2*third), 200, chunkOK(2*third, n), strconv.Itoa(2*third))
	at = end
	want(t, "chunk 2 once the run expired", c.send(t, 2*third, n), 409, uploadError("Expected the chunk at offset 0"), "0")
	want(t, "chunk 0 starts it again", c.send(t, 0, third), 200, chunkOK(third, n), strconv.Itoa(third))
}
