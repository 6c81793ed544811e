package chaos

import (
	"context"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
)

// branchKey names an upload's branch.
func branchKey(u *upload) string { return u.project + "/" + u.branch }

// completed records that u's scan is complete: a branch's truth (its head)
// is its newest complete scan.
func (w *world) completed(u *upload) {
	if h := w.heads[branchKey(u)]; h == nil || h.seq < u.seq {
		w.heads[branchKey(u)] = u
	}
}

// members are the ids of the issues a scan reported (its membership).
func (w *world) members(scanID string) map[string]bool {
	w.t.Helper()
	ids, err := scans.MemberIDs(context.Background(), ddb.New(w.st.Client(), w.st.TableName()), w.co.ID, scanID)
	if err != nil {
		w.fatalf("members of scan %s: %v", scanID, err)
	}
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// lifecycle is what a delivery that makes a scan its branch's truth is
// checked against: the issues before it, and the previous truth's issues.
type lifecycle struct {
	u      *upload
	before map[string]findings.Issue
	prev   map[string]bool
}

// lifecycleBefore reads what the lifecycle check needs, when the delivery
// is to make u's scan the branch's new truth: it is still processing and
// newer than the branch's head (nil otherwise: a late scan fixes and
// reopens nothing, a complete one is left alone).
func (w *world) lifecycleBefore(u *upload) *lifecycle {
	head := w.heads[branchKey(u)]
	if w.scan(u).Status != scans.ScanProcessing || (head != nil && head.seq > u.seq) {
		return nil
	}
	lc := &lifecycle{u: u, before: w.issues(), prev: map[string]bool{}}
	if head != nil {
		lc.prev = w.members(head.scanID)
	}
	return lc
}

// check is the findings lifecycle (shared/store/findings/lifecycle.go):
// no issue the scan reported is fixed (a fixed one reported again
// reopens), and every open or fix_in_progress issue of the previous truth
// that the scan does not report is fixed now.
func (lc *lifecycle) check(w *world) {
	if lc == nil {
		return
	}
	w.t.Helper()
	after, cur := w.issues(), w.members(lc.u.scanID)
	for id := range cur {
		if after[id].Status == "fixed" {
			w.fatalf("scan of %s reports %s, which is fixed (was %s)", lc.u, id, lc.before[id].Status)
		}
	}
	for id := range lc.prev {
		b := lc.before[id]
		if cur[id] || (b.Status != "open" && b.Status != "fix_in_progress") {
			continue
		}
		if a := after[id]; a.Status != "fixed" || a.FixedScanID != lc.u.scanID {
			w.fatalf("scan of %s does not report %s (%s before), which is %s (fixed by %q), not fixed by it", lc.u, id, b.Status, a.Status, a.FixedScanID)
		}
	}
}
