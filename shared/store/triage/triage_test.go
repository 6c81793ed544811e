package triage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/acceptances"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/decisions"
	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/ruleapply"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/store/triageops"
	"github.com/acme/codescan-api/shared/store/triagerules"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// areas are the store's areas a triage needs, composed over one fresh
// table as store.New composes them (each through its own constructor).
type areas struct {
	tb      *ddb.Table
	f       *findings.Findings
	catalog *catalog.Catalog
	lists   *issuelists.Lists
	rules   *triagerules.TriageRules
	ops     *triageops.TriageOps
	triage  *triage.Triage
	sca     *sca.SCA
	apply   *ruleapply.Applier
}

func compose(t *testing.T) *areas {
	t.Helper()
	tb := ddb.New(testenv.Table(t))
	l := &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention}
	a := &areas{tb: tb, catalog: catalog.New(tb, l), rules: triagerules.New(tb, l), ops: triageops.New(tb, l)}
	sc, tr, dec, acc := scans.New(tb, l), trends.New(tb), decisions.New(tb), acceptances.New(tb)
	a.f = findings.New(tb, l, findings.Deps{Catalog: a.catalog, Trends: tr, Decisions: dec, Rules: a.rules})
	a.lists = issuelists.New(tb, a.f, sc, a.catalog, tenancy.New(tb, l), tr, acc)
	a.triage = triage.New(tb, l, a.f, a.lists, a.ops, a.rules, dec, acc)
	a.sca = sca.New(tb, l, sca.Deps{Exploits: exploits.New(tb), Rules: a.rules, Ops: a.ops})
	a.apply = ruleapply.New(tb, a.triage, a.rules, a.ops, a.sca)
	return a
}

// seed stores n issues of a new project through the issue write path:
// every third already false_positive, the others open; it returns the
// project.
func (a *areas) seed(t *testing.T, company int64, name string, n int) schema.Project {
	t.Helper()
	ctx := context.Background()
	p, err := a.catalog.CreateProject(ctx, schema.Project{CompanyID: company, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	issues := make([]findings.Issue, n)
	changes := make([]findings.IssueChange, n)
	for k := range n {
		status := "open"
		if k%3 == 0 {
			status = "false_positive"
		}
		issues[k] = findings.Issue{ID: schema.IssueID(company, p.ID, "main", "semgrep", fmt.Sprint(name, k)), ProjectID: p.ID, ProjectName: p.Name,
			Branch: "main", Tool: "semgrep", Fingerprint: fmt.Sprint(name, k), CWE: []int{79, 89}[k%2], FilePath: fmt.Sprintf("src/f%d.go", k%4),
			Urgency: "HI", Status: status, CreatedAt: "2026-11-01T10:00:00Z"}
		if err := issues[k].Prepare(company, "2026-11-01T10:00:00Z"); err != nil {
			t.Fatal(err)
		}
		changes[k] = findings.IssueChange{After: &issues[k]}
	}
	if _, err := findings.Commit(ctx, a.f, company, changes); err != nil {
		t.Fatal(err)
	}
	if err := findings.Settle(ctx, a.f, company, findings.CounterKeys(company, issues)); err != nil {
		t.Fatal(err)
	}
	return p
}

// statuses counts the company's issues by status, item by item, and
// checks that the issue list's total (from the counters) agrees.
func (a *areas) statuses(t *testing.T, company int64) map[string]int {
	t.Helper()
	ctx := context.Background()
	out := map[string]int{}
	if err := a.lists.EachIssue(ctx, company, func(i findings.Issue) error { out[i.Status]++; return nil }); err != nil {
		t.Fatal(err)
	}
	for status, n := range out {
		_, _, total, err := a.lists.ListIssues(ctx, company, issuelists.IssueFilter{Status: status}, page.Request{Limit: 1})
		if err != nil || total != int64(n) {
			t.Fatalf("%s: the counters say %d, the items %d (%v)", status, total, n, err)
		}
	}
	return out
}

// A person's triage of one issue goes through the issue write path: the
// status, reason and counters move in one write with the history entry
// (naming the person) and one audit entry; the same change again writes
// nothing; a status a person cannot set is refused, another company's
// issue is not found.
func TestUpdateIssue(t *testing.T) {
	t.Parallel()
	a := compose(t)
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{Via: ledger.ViaAPIKey, UserID: 5, KeyID: 1})
	p := a.seed(t, 1, "Web", 6)
	id := schema.IssueID(1, p.ID, "main", "semgrep", "Web1") // open
	fp, why := "false_positive", "test fixture"
	u := triage.IssueUpdate{Status: &fp, Reason: &why}
	got, err := a.triage.UpdateIssue(ctx, 1, id, u, findings.Actor{UserID: 5})
	if err != nil || got.Status != fp || got.Reason != why {
		t.Fatalf("update: %+v %v", got, err)
	}
	if s := a.statuses(t, 1); s["open"] != 3 || s["false_positive"] != 3 {
		t.Fatalf("statuses %v", s)
	}
	if again, err := a.triage.UpdateIssue(ctx, 1, id, u, findings.Actor{UserID: 5}); err != nil || again != got {
		t.Fatalf("the same change again: %+v %v", again, err)
	}
	hist, err := a.lists.IssueHistory(ctx, 1, id)
	if err != nil || len(hist) != 1 || hist[0].From != "open" || hist[0].To != fp || hist[0].By.UserID != 5 || hist[0].Reason != why {
		t.Fatalf("history %+v %v", hist, err)
	}
	var audit []schema.AuditItem
	if err := a.tb.QueryAllConsistent(ctx, ddb.PKBeginsWith(schema.AuditPK(1), ""), &audit); err != nil || len(audit) != 1 || audit[0].Action != "issue.update" || audit[0].TargetID != id {
		t.Fatalf("audit %+v %v", audit, err)
	}
	bad := "suppressed"
	if _, err := a.triage.UpdateIssue(ctx, 1, id, triage.IssueUpdate{Status: &bad}, findings.Actor{UserID: 5}); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("a status no person sets: %v", err)
	}
	if _, err := a.triage.UpdateIssue(ctx, 2, id, u, findings.Actor{UserID: 5}); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("another company's issue: %v", err)
	}
}

// A triage of what a filter matches changes those not already in the
// status, counts exactly, and changes nothing when made again; the same
// change as a bulk operation, applied a page at a time, counts what it
// changed.
func TestTriageByFilterAndByOperation(t *testing.T) {
	t.Parallel()
	a := compose(t)
	ctx := context.Background()
	a.seed(t, 1, "Web", 24)
	cwe := 79
	fixing := "fix_in_progress"
	matched, changed, err := a.triage.TriageIssues(ctx, 1, issuelists.IssueFilter{CWE: &cwe}, fixing, "", acceptances.Terms{}, findings.Actor{UserID: 5})
	if err != nil || matched != 12 || changed != 12 {
		t.Fatalf("by filter: %d matched, %d changed, %v", matched, changed, err)
	}
	if _, changed, err := a.triage.TriageIssues(ctx, 1, issuelists.IssueFilter{CWE: &cwe}, fixing, "", acceptances.Terms{}, findings.Actor{UserID: 5}); err != nil || changed != 0 {
		t.Fatalf("again: %d %v", changed, err)
	}
	before := a.statuses(t, 1)
	if before[fixing] != 12 || before["open"] != 8 || before["false_positive"] != 4 {
		t.Fatalf("statuses %v", before)
	}

	op, err := a.ops.CreateTriageOp(ctx, schema.TriageOpItem{CompanyID: 1, UserID: 5, Status: "false_positive", Query: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	op, _, err = a.ops.StartTriageOp(ctx, 1, op.ID, 5)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	if err := a.lists.EachIssue(ctx, 1, func(i findings.Issue) error { all = append(all, i.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	for len(all) > 0 {
		n := min(len(all), 7)
		next := "more"
		if n == len(all) {
			next = ""
		}
		if op, err = a.ops.CollectTriageIDs(ctx, op, all[:n], next); err != nil {
			t.Fatal(err)
		}
		all = all[n:]
	}
	for op.Page < op.Pages {
		if op, err = a.triage.ApplyTriagePage(ctx, op); err != nil {
			t.Fatal(err)
		}
	}
	after := a.statuses(t, 1)
	if op.Matched != 24 || op.Processed != 24 || op.Changed != 20 || int(op.Changed) != after["false_positive"]-before["false_positive"] || after["false_positive"] != 24 {
		t.Fatalf("operation %+v, statuses %v", op, after)
	}
}
