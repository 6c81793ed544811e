package chaos

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"time"

	"github.com/acme/codescan-api/functions/ingester"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/scans"
)

// leaseExpiry is past the life of a dead worker's lease on a branch
// (shared/store/internal/lease: For, 60 s, and Grace, 3 s), which the
// ingester waits for by the store's clock.
const leaseExpiry = 2 * time.Minute

// upload is one scan upload: its run, report and answer.
type upload struct {
	project, branch, run string
	slots                []int
	withSource           bool
	scanID               string
	seq                  int     // its place among the uploads: scans are created in this order
	killed               *killer // the ingester's death, if it died
}

func (u *upload) String() string {
	return fmt.Sprintf("%s/%s run %s: %d findings (source %v)", u.project, u.branch, u.run[:8], len(u.slots), u.withSource)
}

// drawSlots draws 5-40 distinct slots of the pool, sorted.
func (w *world) drawSlots() []int {
	slots := w.rng.Perm(poolSize)[:5+w.rng.IntN(36)]
	slices.Sort(slots)
	return slots
}

// stepUpload uploads a new report on a random branch, with its source
// files or without, and has it ingested (perhaps by a worker that dies).
func (w *world) stepUpload() {
	u := &upload{project: pick(w.rng, w.projects), branch: pick(w.rng, w.branches), run: w.newUUID(),
		slots: w.drawSlots(), withSource: w.rng.IntN(3) == 0}
	w.send(u)
	w.ingest(u)
}

// stepReupload sends an earlier upload again: the same run (a client's
// retry, which must answer the same scan and change nothing), or the same
// report under a new run (every finding recurring).
func (w *world) stepReupload() {
	if len(w.uploads) == 0 {
		w.stepUpload()
		return
	}
	prev := pick(w.rng, w.uploads)
	if w.rng.IntN(2) == 0 {
		again := *prev
		again.killed = nil
		before := w.issues()
		// A scan still processing (its worker died) is completed by the
		// retry's delivery; a complete one must be left as it is.
		pending := w.scan(prev).Status == scans.ScanProcessing
		w.send(&again)
		if again.scanID != prev.scanID {
			w.fatalf("retried upload %s: scan %s, first %s", prev, again.scanID, prev.scanID)
		}
		w.ingest(&again)
		if after := w.issues(); !pending {
			if n, ids := changed(before, after); n != 0 || len(after) != len(before) {
				w.fatalf("retried upload %s changed %d issues %v (issues %d -> %d)", prev, n, ids, len(before), len(after))
			}
		}
		return
	}
	u := &upload{project: prev.project, branch: prev.branch, run: w.newUUID(), slots: prev.slots, withSource: prev.withSource}
	w.send(u)
	w.ingest(u)
}

// send posts the run's source files (when it has them), then its report,
// through the uploads group's routes.
func (w *world) send(u *upload) {
	w.t.Helper()
	if u.withSource {
		srcs := sources(u.slots)
		for _, path := range slices.Sorted(maps.Keys(srcs)) {
			w.doOK(200, "POST", "/code-upload?run_id="+u.run+"&path="+url.QueryEscape(path), "text/plain", []byte(srcs[path]))
		}
	}
	q := url.Values{"engine": {"sarif"}, "project": {u.project}, "branch": {u.branch}, "run_id": {u.run}}
	res := w.doOK(200, "POST", "/scan-upload?"+q.Encode(), "application/json", sarifReport(u.slots))
	var body struct {
		ScanID    string `json:"sast_scan_id"`
		ProjectID int64  `json:"project_id"`
	}
	res.Decode(w.t, &body)
	if u.scanID == "" {
		u.seq = len(w.uploads)
	}
	u.scanID = body.ScanID
	w.projIDs[u.project] = body.ProjectID
	w.uploads = append(w.uploads, u)
	w.note("upload %s -> scan %s", u, u.scanID[:8])
}

// ingester is the ingestion worker on st, as the Lambda main builds it.
func (w *world) ingester(st *store.Store) *ingester.Ingester {
	return &ingester.Ingester{Store: ingester.StoreOf(st), Reports: testenv.Reports(w.t), Log: w.log, Now: w.now}
}

// ingest delivers the upload's scan to the ingester. One time in three
// the worker dies at a random call; the upload then waits, processing,
// for a later step to deliver it again (another scan of its branch may
// be ingested first, as when a stream record is retried late).
func (w *world) ingest(u *upload) {
	w.t.Helper()
	// The time between uploads: a dead worker's lease on the branch
	// (lease.For) has expired by the next delivery.
	w.advance(leaseExpiry)
	job := ingester.Job{CompanyID: w.co.ID, ScanID: u.scanID}
	lc := w.lifecycleBefore(u)
	if w.rng.IntN(3) == 0 {
		k := w.newKiller(30)
		err := w.ingester(k.store(w)).Ingest(k.context(), job)
		w.died("ingester", k)
		w.note("  ingest %s: %v", k, err)
		if err != nil {
			if w.scan(u).Status == scans.ScanComplete { // its last write landed
				w.completed(u)
			}
			u.killed = k
			w.pending = append(w.pending, u)
			return
		}
		if k.dead.Load() {
			lc = nil // what it wrote before it died is not before the delivery
		}
	} else if err := w.ingester(w.st).Ingest(context.Background(), job); err != nil {
		w.fatalf("ingest %s: %v", u, err)
	}
	w.checkScan(u)
	w.completed(u)
	lc.check(w)
}

// stepResume delivers again the scan of one upload whose worker died.
func (w *world) stepResume() {
	if len(w.pending) == 0 {
		return
	}
	n := w.rng.IntN(len(w.pending))
	u := w.pending[n]
	w.pending = slices.Delete(w.pending, n, n+1)
	w.resume(u)
}

// resume is the stream's redelivery of a killed ingestion, which must
// complete the scan exactly.
func (w *world) resume(u *upload) {
	w.t.Helper()
	w.advance(leaseExpiry)
	if err := w.ingester(w.st).Ingest(context.Background(), ingester.Job{CompanyID: w.co.ID, ScanID: u.scanID}); err != nil {
		w.fatalf("resumed ingest of %s (%s): %v", u, u.killed, err)
	}
	w.note("resume %s (%s)", u, u.killed)
	w.checkScan(u)
	w.completed(u)
}

// checkScan: the ingested scan is complete with every finding of its
// report, and its issue list (its membership) holds exactly them.
func (w *world) checkScan(u *upload) {
	w.t.Helper()
	sc := w.scan(u)
	if sc.Status != scans.ScanComplete || sc.Findings != len(u.slots) {
		w.fatalf("scan of %s (%v): status %s, %d findings, want complete with %d (%q)", u, u.killed, sc.Status, sc.Findings, len(u.slots), sc.FailedReason)
	}
	res := w.doOK(200, "GET", "/scan/"+u.scanID+"/issues?page_size=100", "", nil)
	var page struct {
		Total  int                   `json:"total_issues"`
		Issues []struct{ ID string } `json:"issues"`
	}
	res.Decode(w.t, &page)
	if page.Total != len(u.slots) || len(page.Issues) != len(u.slots) {
		w.fatalf("scan of %s (%v): its issue list holds %d (total %d), want %d", u, u.killed, len(page.Issues), page.Total, len(u.slots))
	}
}

// scan reads the upload's scan.
func (w *world) scan(u *upload) scans.Scan {
	w.t.Helper()
	sc, err := w.st.Scans.GetScan(context.Background(), w.co.ID, u.scanID)
	if err != nil {
		w.fatalf("scan of %s: %v", u, err)
	}
	return sc
}
