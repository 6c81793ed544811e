package ruleapply_test

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
	"github.com/acme/codescan-api/shared/triagemodel"
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

var semgrepFP = triagemodel.Action{Status: "false_positive", Reason: "generated code"}

// rule stores an active rule of the company acting on semgrep's findings.
func (a *areas) rule(t *testing.T, company, project int64) triagerules.Rule {
	t.Helper()
	r, err := a.rules.CreateTriageRule(context.Background(), triagerules.Rule{CompanyID: company, ProjectID: project, Enabled: true, CreatedBy: 5,
		Matcher: triagemodel.Matcher{Tool: "semgrep"}, Action: semgrepFP})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// scaFindings stores k open SCA findings of semgrep's in the project.
func (a *areas) scaFindings(t *testing.T, company, project int64, k int) {
	t.Helper()
	sc := scans.Scan{ID: "7c1e4a2b-3d5f-4e6a-8b9c-0d1e2f3a4b5c", CompanyID: company, ProjectID: project, Branch: "main", Engine: "osv", Tool: "semgrep", CreatedAt: "2026-11-01T10:00:00Z"}
	var found []sca.Issue
	for n := range k {
		adv := fmt.Sprintf("GHSA-0000-0000-%04d", n)
		found = append(found, sca.Issue{ID: schema.IssueID(company, project, "main", "semgrep", adv), ProjectID: project, Branch: "main", Tool: "semgrep",
			IDs: []string{adv}, Classification: adv, Severity: "HIGH", Package: sca.Package{Name: fmt.Sprint("pkg", n), Version: "1.0.0", Ecosystem: "npm"}})
	}
	if err := a.sca.PutScanSCAIssues(context.Background(), company, sc, found); err != nil {
		t.Fatal(err)
	}
}

func (a *areas) scaStatuses(t *testing.T, company int64) map[string]int {
	t.Helper()
	out := map[string]int{}
	if err := a.sca.EachSCAIssue(context.Background(), company, func(i sca.Issue) error { out[i.Status]++; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// A rule's application at once counts first (a dry run changes nothing
// and answers what the application then changes), changes the SAST issues
// and the SCA findings it acts on, by the rule, with exact counters, and
// changes nothing when made again; a disabled rule is refused, and a dry
// run of it allowed.
func TestApplicationAtOnce(t *testing.T) {
	t.Parallel()
	a := compose(t)
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{Via: ledger.ViaAPIKey, UserID: 5, KeyID: 1})
	p := a.seed(t, 1, "Web", 30)
	a.scaFindings(t, 1, p.ID, 4)
	r := a.rule(t, 1, 0)
	before := a.statuses(t, 1)
	dry, err := a.apply.ApplyTriageRuleAll(ctx, 1, r.ID, true, 5)
	if err != nil || dry.Changed != 20+4 || dry.Operation != nil {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if s := a.statuses(t, 1); fmt.Sprint(s) != fmt.Sprint(before) {
		t.Fatalf("a dry run changed %v to %v", before, s)
	}
	done, err := a.apply.ApplyTriageRuleAll(ctx, 1, r.ID, false, 5)
	if err != nil || done.Changed != dry.Changed || done.Operation != nil || len(done.Sample) != min(dry.Changed, 20) || done.Sample[0] != dry.Sample[0] {
		t.Fatalf("applied: %+v %v", done, err)
	}
	if s := a.statuses(t, 1); s["open"] != 0 || s["false_positive"] != 30 {
		t.Fatalf("SAST after: %v", s)
	}
	if s := a.scaStatuses(t, 1); s["false_positive"] != 4 || len(s) != 1 {
		t.Fatalf("SCA after: %v", s)
	}
	if again, err := a.apply.ApplyTriageRuleAll(ctx, 1, r.ID, false, 5); err != nil || again.Changed != 0 {
		t.Fatalf("again: %+v %v", again, err)
	}
	if _, err := a.rules.SetTriageRuleEnabled(ctx, 1, r.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.apply.ApplyTriageRuleAll(ctx, 1, r.ID, false, 5); !errors.Is(err, triage.ErrRuleInactive) {
		t.Fatalf("a disabled rule: %v", err)
	}
	if res, err := a.apply.ApplyTriageRuleAll(ctx, 1, r.ID, true, 5); err != nil || res.Changed != 0 {
		t.Fatalf("a dry run of a disabled rule: %+v %v", res, err)
	}
}

// Two deliveries of one application operation interleave step by step,
// the second always a step behind (it read the operation before the first
// moved it): every page is collected once, every step applied and counted
// once, and the operation ends with its counts equal to what changed, SAST
// issues and SCA findings alike.
func TestOperationCountsWhatChanged(t *testing.T) {
	t.Parallel()
	a := compose(t)
	ctx := context.Background()
	p := a.seed(t, 1, "Web", 60)
	a.seed(t, 1, "Lib", 9) // another project: the rule is the Web project's
	a.scaFindings(t, 1, p.ID, 7)
	r := a.rule(t, 1, p.ID)
	before, beforeSCA := a.statuses(t, 1), a.scaStatuses(t, 1)
	op, err := a.ops.CreateRuleOp(ctx, schema.TriageOpItem{CompanyID: 1, UserID: 5, RuleID: r.ID, Status: r.Action.Status, Reason: r.Action.Reason}, triagerules.ApplyAudit(r, 0))
	if err != nil {
		t.Fatal(err)
	}
	first, ok, err := a.ops.StartTriageOp(ctx, 1, op.ID, 5)
	if err != nil || !ok {
		t.Fatalf("start: %v %v", ok, err)
	}
	second := first // the other delivery's copy
	for first.State == triageops.Collecting {
		next, err := a.apply.CollectRulePage(ctx, first, 8)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.apply.CollectRulePage(ctx, second, 8); !errors.Is(err, ddb.ErrConflict) {
			t.Fatalf("the same page collected by the other delivery: %v", err)
		}
		second, first = first, next
	}
	if first.State != triageops.Applying || first.Matched != 40+7 {
		t.Fatalf("collected %+v, want 40 issues and 7 SCA findings", first)
	}
	second = first
	for first.Page < first.Pages {
		next, err := a.apply.ApplyTriagePage(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		// The other delivery, at the page the first just applied, finds it
		// applied and resumes from the checkpoint: nothing twice.
		late, err := a.apply.ApplyTriagePage(ctx, second)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := a.ops.GetTriageOp(ctx, 1, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		if late.Page < next.Page || stored.Changed < next.Changed {
			t.Fatalf("the late delivery went back: late %+v, stored %+v, first %+v", late, stored, next)
		}
		first, second = stored, stored
	}
	if err := a.ops.FinishTriageOp(ctx, first); err != nil {
		t.Fatal(err)
	}
	done, err := a.ops.GetTriageOp(ctx, 1, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	after, afterSCA := a.statuses(t, 1), a.scaStatuses(t, 1)
	changed := after["false_positive"] - before["false_positive"] + afterSCA["false_positive"] - beforeSCA["false_positive"]
	if done.State != triageops.Done || done.Processed != done.Matched || done.Changed != int64(changed) || changed != 40+7 {
		t.Fatalf("done %+v; %d changed (SAST %v -> %v, SCA %v -> %v)", done, changed, before, after, beforeSCA, afterSCA)
	}
	if after["open"] != 6 { // Lib's open issues
		t.Fatalf("statuses %v", after)
	}
}
