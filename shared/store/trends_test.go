package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/trendmath"
)

// trendWorld drives scans and triage of one company on a controlled clock.
type trendWorld struct {
	st      *store.Store
	now     time.Time
	start   time.Time
	company int64
}

func newTrendWorld(t *testing.T) *trendWorld {
	base := testenv.NewStore(t)
	w := &trendWorld{company: 31, start: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	w.now = w.start
	w.st = store.New(base.Client(), base.TableName(), store.WithClock(func() time.Time { return w.now }))
	return w
}

// day moves the clock to 10:00 of day d of the run.
func (w *trendWorld) day(d int) { w.now = w.start.AddDate(0, 0, d) }

type reported struct{ fp, urgency string }

// scan applies a complete scan of project 5's main branch reporting fs.
func (w *trendWorld) scan(t *testing.T, fs ...reported) {
	t.Helper()
	ctx := context.Background()
	sc, err := w.st.Scans.CreateScan(ctx, scans.Scan{ID: uuid.NewString(), CompanyID: w.company, ProjectID: 5, Branch: "main",
		Engine: "sarif", Tool: "semgrep", Status: scans.ScanProcessing, CreatedAt: w.now.Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	var found []findings.Issue
	for _, f := range fs {
		found = append(found, findings.Issue{ID: w.id(f.fp), ProjectID: 5, ProjectName: "api", Branch: "main", Tool: "semgrep",
			Fingerprint: f.fp, CWE: 79, FilePath: "src/" + f.fp + ".go", Line: 1, Urgency: f.urgency, RuleID: "r", CreatedAt: sc.CreatedAt})
	}
	if _, err := w.st.Findings.ApplyScan(ctx, w.company, sc, found); err != nil {
		t.Fatal(err)
	}
}

func (w *trendWorld) id(fp string) string {
	return findings.IssueID(w.company, 5, "main", "semgrep", fp)
}

// point is the expected figures of one day (zero elsewhere); open is
// {CR, HI, ME, LO} at the day's end.
type point struct {
	opened, fixed, reopened, dismissed int64
	open                               trendmath.ByUrgency
}

// TestTrendOfThirtyDays drives scans, triage (one issue, bulk) and seeded
// issues through 30 days and checks every daily figure of the company and
// of both projects, time to fix and SLA compliance (CR 7 days, HI 30).
func TestTrendOfThirtyDays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newTrendWorld(t)
	hi := func(fps ...string) []reported {
		var out []reported
		for _, fp := range fps {
			out = append(out, reported{fp, "HI"})
		}
		return out
	}
	w.scan(t, hi("A1", "A2", "A3", "A4", "A5")...) // day 0: five opened
	w.day(3)
	w.scan(t, hi("A1", "A2", "A3")...) // A4, A5 fixed after 3 days
	w.day(5)
	// Bulk triage matching A1 alone (its file).
	if m, c, err := w.st.Triage.TriageIssues(ctx, w.company, issuelists.IssueFilter{FilePath: "src/A1.go"}, "false_positive", "test data", schema.Terms{}, findings.Actor{UserID: 1}); err != nil || m != 1 || c != 1 {
		t.Fatalf("triage: %d %d %v", m, c, err)
	}
	w.day(10)
	w.scan(t, hi("A2", "A3", "A4")...) // A4 reported again: reopened
	w.day(12)
	var seeded []findings.Issue
	for _, fp := range []string{"B1", "B2", "B3"} {
		seeded = append(seeded, findings.Issue{ID: findings.IssueID(w.company, 6, "main", "seed", fp), ProjectID: 6, ProjectName: "web",
			Branch: "main", Tool: "seed", Fingerprint: fp, CWE: 89, FilePath: "web/" + fp + ".js", Urgency: "CR", Status: "open"})
	}
	if n, err := bulkload.CreateIssues(ctx, w.st, w.company, seeded); err != nil || n != 3 {
		t.Fatalf("seed: %d %v", n, err)
	}
	w.day(15)
	if _, err := bulkload.SetIssueStatus(ctx, w.st, w.company, seeded[0].ID, "fixed"); err != nil { // B1: 3 days, within
		t.Fatal(err)
	}
	w.day(20)
	w.scan(t, reported{"A2", "CR"}, reported{"A3", "HI"}) // A4 fixed (20 days, within); A2 becomes critical
	w.day(25)
	fixed := "fixed"
	if _, err := w.st.Triage.UpdateIssue(ctx, w.company, seeded[1].ID, triage.IssueUpdate{Status: &fixed}, findings.Actor{UserID: 1}); err != nil { // B2: 13 days, late
		t.Fatal(err)
	}
	w.day(29)
	w.scan(t, hi("A3")...) // A2 fixed: critical since day 20, first seen day 0, late

	company := map[int]point{
		0: {opened: 5, open: trendmath.ByUrgency{0, 5, 0, 0}}, 3: {fixed: 2, open: trendmath.ByUrgency{0, 3, 0, 0}},
		5: {dismissed: 1, open: trendmath.ByUrgency{0, 2, 0, 0}}, 10: {reopened: 1, open: trendmath.ByUrgency{0, 3, 0, 0}},
		12: {opened: 3, open: trendmath.ByUrgency{3, 3, 0, 0}}, 15: {fixed: 1, open: trendmath.ByUrgency{2, 3, 0, 0}},
		20: {fixed: 1, open: trendmath.ByUrgency{3, 1, 0, 0}}, 25: {fixed: 1, open: trendmath.ByUrgency{2, 1, 0, 0}},
		29: {fixed: 1, open: trendmath.ByUrgency{1, 1, 0, 0}},
	}
	api := map[int]point{
		0: {opened: 5, open: trendmath.ByUrgency{0, 5, 0, 0}}, 3: {fixed: 2, open: trendmath.ByUrgency{0, 3, 0, 0}},
		5: {dismissed: 1, open: trendmath.ByUrgency{0, 2, 0, 0}}, 10: {reopened: 1, open: trendmath.ByUrgency{0, 3, 0, 0}},
		20: {fixed: 1, open: trendmath.ByUrgency{1, 1, 0, 0}}, 29: {fixed: 1, open: trendmath.ByUrgency{0, 1, 0, 0}},
	}
	web := map[int]point{
		12: {opened: 3, open: trendmath.ByUrgency{3, 0, 0, 0}}, 15: {fixed: 1, open: trendmath.ByUrgency{2, 0, 0, 0}},
		25: {fixed: 1, open: trendmath.ByUrgency{1, 0, 0, 0}},
	}
	for _, sc := range []struct {
		name    string
		project int64
		want    map[int]point
	}{{"company", 0, company}, {"api", 5, api}, {"web", 6, web}} {
		got, err := w.st.Lists.Trend(ctx, w.company, sc.project, 30)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Points) != 30 {
			t.Fatalf("%s: %d points", sc.name, len(got.Points))
		}
		var last point
		for d, p := range got.Points {
			want, ok := sc.want[d]
			if !ok {
				want = point{open: last.open}
			}
			last = want
			if date := trendmath.Date(w.start.AddDate(0, 0, d)); p.Date != date {
				t.Errorf("%s day %d: date %s, want %s", sc.name, d, p.Date, date)
			}
			g := point{p.Opened, p.Fixed, p.Reopened, p.Dismissed, p.Open}
			if g != want {
				t.Errorf("%s day %d: got %+v, want %+v", sc.name, d, g, want)
			}
		}
		if got.Open != last.open {
			t.Errorf("%s: open now %v, want %v", sc.name, got.Open, last.open)
		}
	}

	all, err := w.st.Lists.Trend(ctx, w.company, 0, 30)
	if err != nil {
		t.Fatal(err)
	}
	// Fixes: HI A4 (3), A5 (3), A4 (20), all within 30 days; CR B1 (3,
	// within), B2 (13, late), A2 (29, late).
	type fixes struct {
		fixed, within int64
		median, p90   int
	}
	check := func(name string, f trendmath.Fixes, want fixes) {
		t.Helper()
		m, okM := f.Median()
		p, okP := f.P90()
		if got := (fixes{f.Fixed, f.WithinSLA, m.Days, p.Days}); got != want || !okM || !okP {
			t.Errorf("%s fixes: got %+v, want %+v", name, got, want)
		}
	}
	check("CR", all.Fixes.ByUrgency[0], fixes{3, 1, 13, 29})
	check("HI", all.Fixes.ByUrgency[1], fixes{3, 3, 3, 20})
	check("all", all.Fixes.All, fixes{6, 4, 3, 29})
	// Open now: A3 (HI, due day 30) and B3 (CR, due day 19: past).
	if all.PastDue != (trendmath.ByUrgency{1, 0, 0, 0}) {
		t.Errorf("past due: %v", all.PastDue)
	}
	by, sum := trendmath.SLACompliance(all.Fixes, all.Open, all.PastDue)
	if by[0].FixedWithinSLA != (trendmath.Share{Part: 1, Of: 3}) || sum.FixedWithinSLA != (trendmath.Share{Part: 4, Of: 6}) || sum.OpenPastSLA != (trendmath.Share{Part: 1, Of: 2}) {
		t.Errorf("compliance: %+v %+v", by, sum)
	}
	web6, err := w.st.Lists.Trend(ctx, w.company, 6, 30)
	if err != nil {
		t.Fatal(err)
	}
	check("web CR", web6.Fixes.ByUrgency[0], fixes{2, 1, 3, 13})
	// B3 is web's; api's open A3 is not due yet.
	if web6.PastDue != (trendmath.ByUrgency{1, 0, 0, 0}) {
		t.Errorf("web's past due: %v", web6.PastDue)
	}
	api5, err := w.st.Lists.Trend(ctx, w.company, 5, 30)
	if err != nil {
		t.Fatal(err)
	}
	if api5.PastDue != (trendmath.ByUrgency{}) {
		t.Errorf("api's past due: %v", api5.PastDue)
	}
	// A window of 10 days sees the fixes of days 20..29 only.
	recent, err := w.st.Lists.Trend(ctx, w.company, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	check("recent all", recent.Fixes.All, fixes{3, 1, 20, 29}) // 13, 20, 29 days
	if recent.Points[0].Open != (trendmath.ByUrgency{3, 1, 0, 0}) {
		t.Errorf("recent first day: %+v", recent.Points[0])
	}
	testenv.Recount(t, w.st, w.company)
}

// TestTrendReadsTheWindowOnly writes 120 days of issues, fixes and
// reopens in a project, then reads its 90-day trend: three requests (the
// totals, one query of the window's 90 day records, the totals again),
// whatever the issues number, and the read capacity of those records.
func TestTrendReadsTheWindowOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newTrendWorld(t)
	var prev []findings.Issue
	for d := range 120 {
		w.day(d)
		var batch []findings.Issue
		for k, u := range []string{"CR", "HI", "ME"} {
			batch = append(batch, findings.Issue{ID: findings.IssueID(w.company, 7, "main", "seed", fmt.Sprint(d, "-", k)), ProjectID: 7, ProjectName: "p",
				Branch: "main", Tool: "seed", CWE: 79, FilePath: "a.go", Urgency: u, Status: "open"})
		}
		if _, err := bulkload.CreateIssues(ctx, w.st, w.company, batch); err != nil {
			t.Fatal(err)
		}
		for _, i := range prev[:min(2, len(prev))] {
			if _, err := bulkload.SetIssueStatus(ctx, w.st, w.company, i.ID, "fixed"); err != nil {
				t.Fatal(err)
			}
		}
		prev = batch
	}
	var m ddb.Meter
	got, err := w.st.Trends.Window(ddb.WithMeter(ctx, &m), w.company, 7, 90)
	if err != nil {
		t.Fatal(err)
	}
	requests, rcu, _ := m.Snapshot()
	snap, err := w.st.Trends.Snapshot(ctx, w.company, 7, got.Points[0].Date)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("90-day trend of a project: %d requests, %.1f RCU (strongly consistent), %d day records", requests, rcu, len(snap.Days))
	if requests != 3 || len(snap.Days) != 90 || rcu > 12 {
		t.Fatalf("read %d requests, %.1f RCU, %d day records", requests, rcu, len(snap.Days))
	}
	var pm ddb.Meter
	if _, err := w.st.Lists.Trend(ddb.WithMeter(ctx, &pm), w.company, 7, 90); err != nil {
		t.Fatal(err)
	}
	prequests, prcu, _ := pm.Snapshot()
	t.Logf("with the project's past-due count: %d requests, %.1f RCU", prequests, prcu)
	// Three opened a day; the critical and high of the day before fixed.
	last := got.Points[89]
	if last.Opened != 3 || last.Fixed != 2 || got.Fixes.All.Fixed != 180 || got.Open != (trendmath.ByUrgency{1, 1, 120, 0}) {
		t.Fatalf("last day %+v, fixes %d, open %v", last, got.Fixes.All.Fixed, got.Open)
	}
}
