package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

// dueWorld detects findings through scans (the ingestion path), one branch
// per finding, at times the test chooses.
type dueWorld struct {
	t       *testing.T
	st      *store.Store
	company int64
}

const dueProject = 4

// scan applies a complete scan of branch at `at` reporting the finding of
// that branch with the urgency, or nothing (urgency ""), and returns the
// finding's issue id.
func (w *dueWorld) scan(branch, urgency string, at time.Time) string {
	w.t.Helper()
	ctx := context.Background()
	sc, err := w.st.Scans.CreateScan(ctx, scans.Scan{ID: uuid.NewString(), CompanyID: w.company, ProjectID: dueProject, Branch: branch,
		Engine: "sarif", Tool: "semgrep", Status: scans.ScanProcessing, CreatedAt: at.Format(time.RFC3339)})
	if err != nil {
		w.t.Fatal(err)
	}
	id := findings.IssueID(w.company, dueProject, branch, "semgrep", "fp-"+branch)
	var found []findings.Issue
	if urgency != "" {
		found = append(found, findings.Issue{ID: id, ProjectID: dueProject, ProjectName: "api", Branch: branch, Tool: "semgrep",
			Fingerprint: "fp-" + branch, CWE: 79, FilePath: "web/" + branch + ".go", Line: 9, Urgency: urgency,
			Title: "XSS on " + branch, CreatedAt: sc.CreatedAt})
	}
	if _, err := w.st.Findings.ApplyScan(ctx, w.company, sc, found); err != nil {
		w.t.Fatal(err)
	}
	return id
}

// run runs the SLA job at now and returns the ids of the issues it raised
// breaches for (sorted) and what it read.
func (w *dueWorld) run(now time.Time) (raised []string, reads usage) {
	w.t.Helper()
	var m ddb.Meter
	before := w.breaches()
	n, err := scheduler.SLAChecks(ddb.WithMeter(context.Background(), &m), scheduler.StoreOf(w.st), now)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, id := range w.breaches() {
		if !slices.Contains(before, id) {
			raised = append(raised, id)
		}
	}
	if n != len(raised) {
		w.t.Fatalf("job says %d raised, outbox has %d new: %v", n, len(raised), raised)
	}
	reads.requests, reads.rcu, _ = m.Snapshot()
	return raised, reads
}

type usage struct {
	requests int
	rcu      float64
}

// breaches are the issue ids with an sla_breach event, sorted.
func (w *dueWorld) breaches() []string {
	w.t.Helper()
	var out []string
	err := w.st.Lists.EachIssue(context.Background(), w.company, func(i findings.Issue) error {
		if _, ok := outboxEvent(w.t, w.st, w.company, "sla_breach-"+i.ID); ok {
			out = append(out, i.ID)
		}
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestSLAJobReadsOnlyWhatIsDue runs the SLA job on a controlled clock over
// issues detected at different times and urgencies, changed through every
// issue write path: each run raises exactly the issues past due, once,
// and reads only the issues that became due since the last run.
func TestSLAJobReadsOnlyWhatIsDue(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	c := env.Company(t, "Due")
	w := &dueWorld{t: t, st: env.Store, company: c.ID}
	day := func(n int) time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).AddDate(0, 0, n) }

	a := w.scan("a", "CR", day(0))  // due day 7
	h := w.scan("h", "HI", day(0))  // due day 30
	x := w.scan("x", "CR", day(0))  // fixed on day 3: never due
	u := w.scan("u", "LO", day(0))  // due day 180, until it turns critical on day 12
	tr := w.scan("t", "CR", day(1)) // accepted on day 4, reopened by a person on day 20
	b := w.scan("b", "CR", day(2))  // due day 9
	w.scan("x", "", day(3))
	accepted := "accepted_risk"
	if _, err := env.Store.Triage.UpdateIssue(ctx, c.ID, tr, triage.IssueUpdate{Status: &accepted}, findings.Actor{UserID: 1}); err != nil {
		t.Fatal(err)
	}

	raised, idle := w.run(day(5))
	if len(raised) != 0 {
		t.Fatalf("day 5 raised %v", raised)
	}
	raised, first := w.run(day(8))
	if !slices.Equal(raised, []string{a}) {
		t.Fatalf("day 8 raised %v, want %v", raised, []string{a})
	}
	// What it read beyond an idle run: one index key (the query) and one
	// issue, in one batch read; and it wrote its event and its move.
	if first.rcu-idle.rcu != 1 || first.requests-idle.requests != 3 {
		t.Fatalf("day 8 read %+v, an idle run %+v", first, idle)
	}
	// A write that leaves a breached issue open keeps it out of the range.
	assignee := int64(7)
	if _, err := env.Store.Triage.UpdateIssue(ctx, c.ID, a, triage.IssueUpdate{AssignedTo: &assignee}, findings.Actor{UserID: 1}); err != nil {
		t.Fatal(err)
	}
	raised, again := w.run(day(8).Add(time.Hour))
	if len(raised) != 0 || again != idle {
		t.Fatalf("second run: raised %v, read %+v, an idle run %+v", raised, again, idle)
	}
	// 150 more issues stored, none due: the run reads no more.
	var seeded []findings.Issue
	for n := range 150 {
		seeded = append(seeded, findings.Issue{ProjectID: dueProject, ProjectName: "api", Branch: "main", CWE: 22,
			FilePath: fmt.Sprintf("lib/f%03d.go", n), Urgency: "LO", Status: "open", CreatedAt: day(6).Format(time.RFC3339)})
	}
	if _, err := bulkload.CreateIssues(ctx, env.Store, c.ID, seeded); err != nil {
		t.Fatal(err)
	}
	if raised, more := w.run(day(8).Add(2 * time.Hour)); len(raised) != 0 || more != idle {
		t.Fatalf("with 150 more issues: raised %v, read %+v, an idle run %+v", raised, more, idle)
	}

	if raised, _ := w.run(day(10)); !slices.Equal(raised, []string{b}) {
		t.Fatalf("day 10 raised %v, want b", raised)
	}
	// A re-detection as critical moves u's deadline to day 7: past.
	w.scan("u", "CR", day(12))
	if raised, _ := w.run(day(12)); !slices.Equal(raised, []string{u}) {
		t.Fatalf("day 12 raised %v, want u", raised)
	}
	// a is fixed, then reported again: reopened, past due, but its breach
	// was raised once already. The run reads it (it re-entered) and moves
	// it back; the next run reads nothing.
	w.scan("a", "", day(13))
	w.scan("a", "CR", day(14))
	if raised, reread := w.run(day(14)); len(raised) != 0 || reread.rcu != first.rcu {
		t.Fatalf("reopened a: raised %v, read %+v, want %+v", raised, reread, first)
	}
	if raised, after := w.run(day(14).Add(time.Hour)); len(raised) != 0 || after != idle {
		t.Fatalf("after the reopen: raised %v, read %+v", raised, after)
	}
	// tr, accepted before its due date, is reopened past it: its first
	// breach comes now. h is fixed before its due date and reopened after.
	open := "open"
	if _, err := env.Store.Triage.UpdateIssue(ctx, c.ID, tr, triage.IssueUpdate{Status: &open}, findings.Actor{UserID: 1}); err != nil {
		t.Fatal(err)
	}
	w.scan("h", "", day(20))
	if raised, _ := w.run(day(31)); !slices.Equal(raised, []string{tr}) {
		t.Fatalf("day 31 raised %v, want the reopened tr", raised)
	}
	w.scan("h", "HI", day(40))
	if raised, _ := w.run(day(40)); !slices.Equal(raised, []string{h}) {
		t.Fatalf("day 40 raised %v, want the reopened h", raised)
	}
	// Bulk triage takes issues out of the index: none of them breaches.
	if _, _, err := env.Store.Triage.TriageIssues(ctx, c.ID, issuelists.IssueFilter{FilePath: "lib/f000.go"}, "false_positive", "", schema.Terms{}, findings.Actor{UserID: 1}); err != nil {
		t.Fatal(err)
	}
	// A settings change rewrites no issue: the same index, another range.
	// 149 seeded issues are past three days (more than one page).
	s := sla.Defaults()
	s.DaysToFix["LO"] = 3
	if err := env.Store.Catalog.PutSLASettings(ctx, c.ID, s); err != nil {
		t.Fatal(err)
	}
	raised, _ = w.run(day(41))
	if len(raised) != 149 || slices.Contains(raised, x) {
		t.Fatalf("day 41 with LO in 3 days raised %d", len(raised))
	}
	if got := w.breaches(); len(got) != 149+5 {
		t.Fatalf("%d breaches in all", len(got))
	}
	if raised, _ := w.run(day(42)); len(raised) != 0 {
		t.Fatalf("day 42 raised %v", raised)
	}
	testenv.Recount(t, env.Store, c.ID)
}

// digestWant is the digest's counts from every issue.
func digestWant(t *testing.T, st *store.Store, companyID int64, now time.Time) map[string]any {
	t.Helper()
	settings, _, err := st.Catalog.SLASettings(context.Background(), companyID)
	if err != nil {
		t.Fatal(err)
	}
	open, overdue, dueSoon := 0, 0, 0
	by := map[string]any{"CR": 0.0, "HI": 0.0, "ME": 0.0, "LO": 0.0}
	err = st.Lists.EachIssue(context.Background(), companyID, func(i findings.Issue) error {
		if i.Status != "open" {
			return nil
		}
		open++
		by[i.Urgency] = by[i.Urgency].(float64) + 1
		first, err := time.Parse(time.RFC3339, i.CreatedAt)
		if err != nil {
			return err
		}
		switch s, _ := sla.Status(first, i.Urgency, settings, now); s {
		case sla.Overdue:
			overdue++
		case sla.DueSoon:
			dueSoon++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"open_issues": float64(open), "overdue": float64(overdue), "due_soon": float64(dueSoon), "open_by_urgency": by}
}

// TestDigestCountsEqualAFullRecount compares the digest, which reads
// counters and counts index ranges, with the counts from every issue, at
// several times and settings, breached and pending issues mixed.
func TestDigestCountsEqualAFullRecount(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	c := env.Company(t, "Digest")
	w := &dueWorld{t: t, st: env.Store, company: c.ID}
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC) // a Monday
	urgencies := []string{"CR", "HI", "ME", "LO"}
	for n := range 40 {
		w.scan(fmt.Sprintf("b%02d", n), urgencies[n%4], start.Add(time.Duration(n)*37*time.Hour))
	}
	for n := range 40 {
		if n%7 == 3 { // some fixed
			w.scan(fmt.Sprintf("b%02d", n), "", start.Add(2000*time.Hour))
		}
	}
	custom := sla.Settings{DaysToFix: map[string]int{"CR": 3, "HI": 10, "ME": 40, "LO": 70}, DueSoonDays: 5}
	seen := map[string]float64{}
	for week, now := range []time.Time{start.AddDate(0, 0, 8), start.AddDate(0, 0, 30), start.AddDate(0, 0, 95), start.AddDate(0, 0, 200)} {
		if week == 2 {
			if err := env.Store.Catalog.PutSLASettings(ctx, c.ID, custom); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := scheduler.SLAChecks(ctx, scheduler.StoreOf(env.Store), now); err != nil { // some issues breached, some pending
			t.Fatal(err)
		}
		if n, err := scheduler.WeeklyDigest(ctx, scheduler.StoreOf(env.Store), now); err != nil || n != 1 {
			t.Fatalf("digest at %s: %d (%v)", now, n, err)
		}
		year, wk := now.ISOWeek()
		ev, ok := outboxEvent(t, env.Store, c.ID, fmt.Sprintf("weekly_digest-%d-%d-W%02d", c.ID, year, wk))
		if !ok {
			t.Fatalf("no digest at %s", now)
		}
		var got map[string]any
		if err := json.Unmarshal(ev.Data, &got); err != nil {
			t.Fatal(err)
		}
		want := digestWant(t, env.Store, c.ID, now)
		for k, v := range want {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Errorf("%s: digest %s = %v, recount %v", now.Format(time.DateOnly), k, got[k], v)
			}
		}
		seen["overdue"] += want["overdue"].(float64)
		seen["due_soon"] += want["due_soon"].(float64)
	}
	if seen["overdue"] == 0 || seen["due_soon"] == 0 {
		t.Errorf("the case is too weak: %v", seen)
	}
}
