package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/gate"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
)

// scanIn applies a scan of branch, tool and upload category.
func (w *branchWorld) scanIn(t *testing.T, branch, tool, category string, fs ...finding) (scans.Scan, findings.ApplyResult) {
	t.Helper()
	w.clock = w.clock.Add(time.Minute)
	ctx := context.Background()
	sc, err := w.st.Scans.CreateScan(ctx, scans.Scan{
		ID: uuid.NewString(), CompanyID: w.company, ProjectID: w.project, Branch: branch, Engine: "sarif",
		Tool: tool, Category: category, Status: scans.ScanProcessing, CreatedAt: w.clock.Format(time.RFC3339),
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.st.Findings.ApplyScan(ctx, w.company, sc, w.found(sc, fs...))
	if err != nil {
		t.Fatal(err)
	}
	return sc, res
}

func (w *branchWorld) statuses(t *testing.T, branch, tool string, fps ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, fp := range fps {
		out[fp] = w.issue(t, branch, tool, fp).Status
	}
	return out
}

func wantStatuses(t *testing.T, step string, got, want map[string]string) {
	t.Helper()
	for fp, s := range want {
		if got[fp] != s {
			t.Fatalf("%s: %s is %q, want %q (all: %v)", step, fp, got[fp], s, got)
		}
	}
}

// Two categories of one tool on one branch (a monorepo's two services)
// never fix each other's findings; a finding both report is one issue,
// fixed only when neither reports it; the counters stay exact.
func TestCategoriesNeverFixEachOther(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	a1, a2, b1, shared := finding{"a1", 89}, finding{"a2", 79}, finding{"b1", 22}, finding{"shared", 89}
	all := []string{"a1", "a2", "b1", "shared"}

	if _, res := w.scanIn(t, "main", "gosec", "services/a", a1, a2, shared); res.Created != 3 {
		t.Fatalf("first scan of a: %+v", res)
	}
	// b's first scan reports none of a's findings: it fixes nothing.
	if _, res := w.scanIn(t, "main", "gosec", "services/b", b1, shared); res.Created != 1 || res.Fixed != 0 || res.Unchanged != 1 {
		t.Fatalf("first scan of b: %+v", res)
	}
	wantStatuses(t, "both scanned", w.statuses(t, "main", "gosec", all...), map[string]string{"a1": "open", "a2": "open", "b1": "open", "shared": "open"})
	testenv.Recount(t, w.st, w.company)

	// a drops a2 and shared: a2 is fixed; shared, which b's latest scan
	// still reports, stays open; b1 is not a's to fix.
	fixA, res := w.scanIn(t, "main", "gosec", "services/a", a1)
	if res.Fixed != 1 || res.Unchanged != 1 {
		t.Fatalf("a without a2 and shared: %+v", res)
	}
	wantStatuses(t, "a dropped a2 and shared", w.statuses(t, "main", "gosec", all...), map[string]string{"a1": "open", "a2": "fixed", "b1": "open", "shared": "open"})
	if got := w.issue(t, "main", "gosec", "a2"); got.FixedScanID != fixA.ID {
		t.Fatalf("a2 fixed by %q, want %q", got.FixedScanID, fixA.ID)
	}
	testenv.Recount(t, w.st, w.company)

	// b reports nothing: b1 and shared (no category reports it now) are
	// fixed; a1 stays open.
	if _, res := w.scanIn(t, "main", "gosec", "services/b"); res.Fixed != 2 {
		t.Fatalf("empty scan of b: %+v", res)
	}
	wantStatuses(t, "b empty", w.statuses(t, "main", "gosec", all...), map[string]string{"a1": "open", "a2": "fixed", "b1": "fixed", "shared": "fixed"})
	testenv.Recount(t, w.st, w.company)

	// shared comes back in a: reopened, one issue still.
	if _, res := w.scanIn(t, "main", "gosec", "services/a", a1, shared); res.Reopened != 1 {
		t.Fatalf("shared back in a: %+v", res)
	}
	wantStatuses(t, "shared back", w.statuses(t, "main", "gosec", "shared"), map[string]string{"shared": "open"})
	testenv.Recount(t, w.st, w.company)
}

// An upload without a category behaves as before categories: its head is
// the tool's head of old (ScanHeadsOf names it) and it fixes what the
// previous uncategorised scan reported. A branch taking categories up (its
// reports gained a runAutomationDetails.id) hands that truth to the first
// category's scan, once; after that, uncategorised scans and categories
// never fix each other's findings.
func TestNoCategoryBehavesAsBefore(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	x, y, c, b, z := finding{"x", 89}, finding{"y", 79}, finding{"c", 22}, finding{"b", 22}, finding{"z", 78}
	all := []string{"x", "y", "c", "b", "z"}

	w.scanIn(t, "main", "semgrep", "", x, y)
	plain, res := w.scanIn(t, "main", "semgrep", "", x)
	if res.Fixed != 1 || res.Unchanged != 1 {
		t.Fatalf("uncategorised scan without y: %+v", res)
	}
	if h, err := w.st.Lists.ScanHeadsOf(ctx, w.company, w.project, "main", "semgrep"); err != nil || len(h) != 1 || h[0].ScanID != plain.ID {
		t.Fatalf("heads of the tool after uncategorised scans: %+v %v", h, err)
	}

	// The first category's first scan takes the uncategorised truth over:
	// x, reported, stays open; c is new.
	goScan, res := w.scanIn(t, "main", "semgrep", "/language:go", x, c)
	if res.Fixed != 0 || res.Created != 1 || res.Unchanged != 1 {
		t.Fatalf("first category scan: %+v", res)
	}
	if h, err := w.st.Lists.ScanHeadsOf(ctx, w.company, w.project, "main", "semgrep"); err != nil || len(h) != 1 || h[0].ScanID != goScan.ID {
		t.Fatalf("heads after the take-over (the uncategorised one emptied, the category's named): %+v %v", h, err)
	}
	// Another category starts from nothing: it fixes nothing.
	if _, res := w.scanIn(t, "main", "semgrep", "/language:python", b); res.Fixed != 0 || res.Created != 1 {
		t.Fatalf("second category's first scan: %+v", res)
	}
	// The first category drops x: fixed, b is not its to fix.
	if _, res := w.scanIn(t, "main", "semgrep", "/language:go", c); res.Fixed != 1 {
		t.Fatalf("category without x: %+v", res)
	}
	// Uncategorised uploads start afresh and never fix a category's.
	if _, res := w.scanIn(t, "main", "semgrep", "", z); res.Fixed != 0 || res.Created != 1 {
		t.Fatalf("uncategorised after the take-over: %+v", res)
	}
	if _, res := w.scanIn(t, "main", "semgrep", ""); res.Fixed != 1 {
		t.Fatalf("empty uncategorised scan: %+v", res)
	}
	wantStatuses(t, "after", w.statuses(t, "main", "semgrep", all...),
		map[string]string{"x": "fixed", "y": "fixed", "c": "open", "b": "open", "z": "fixed"})
	testenv.Recount(t, w.st, w.company)
}

// The gate's baseline after two categories' scans: a finding open on the
// baseline branch in either category is left out of a pull request's
// count, a new one is counted.
func TestGateBaselineAcrossCategories(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	a1, b1, n := finding{"a1", 89}, finding{"b1", 79}, finding{"new", 22}
	w.scanIn(t, "main", "gosec", "services/a", a1)
	bScan, _ := w.scanIn(t, "main", "gosec", "services/b", b1)

	open, err := w.st.Baselines.BaselineOpen(ctx, w.company, w.project, "main", "gosec", []string{"a1", "b1", "new"})
	if err != nil || !open.Fingerprints["a1"] || !open.Fingerprints["b1"] || open.Fingerprints["new"] || open.ScanID != bScan.ID {
		t.Fatalf("baseline open: %+v %v", open, err)
	}
	// A pull request's scan (no category, as the real client sends).
	pr, _ := w.scanIn(t, "feature", "gosec", "", a1, b1, n)
	issues := w.found(pr, a1, b1, n)
	cmp, err := gate.CompareScan(ctx, gate.SourceOf(w.st), pr, "main", issues)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Counted) != 1 || cmp.Counted[0].Fingerprint != "new" || len(cmp.LeftOut) != 2 {
		t.Fatalf("comparison: counted %d left out %d (%+v)", len(cmp.Counted), len(cmp.LeftOut), cmp.Summary)
	}
	testenv.Recount(t, w.st, w.company)
}
