package sca_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/triagemodel"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// world is the SCA area with the areas it reads (exploits, the triage
// room's rules) on a fresh table.
type world struct {
	tb    *ddb.Table
	sca   *sca.SCA
	rules *triage.Triage
}

func newWorld(t *testing.T) *world {
	t.Helper()
	tb := ddb.New(testenv.Table(t))
	l := &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention}
	rules := triage.New(tb, l)
	return &world{tb: tb, rules: rules, sca: sca.New(tb, l, sca.Deps{Exploits: exploits.New(tb), Rules: rules})}
}

func findings(sc scans.Scan, n int) []sca.Issue {
	var out []sca.Issue
	for k := range n {
		adv := fmt.Sprintf("GHSA-0000-0000-%04d", k)
		out = append(out, sca.Issue{ID: schema.IssueID(sc.CompanyID, sc.ProjectID, sc.Branch, "osv", adv), ProjectID: sc.ProjectID, Branch: sc.Branch, Tool: "osv",
			IDs: []string{adv}, Classification: adv, Severity: "HIGH", Package: sca.Package{Name: fmt.Sprint("pkg", k%3), Version: "1.0.0", Ecosystem: "npm"},
			Location: sca.Location{Path: "package-lock.json"}})
	}
	return out
}

// A scan's SCA findings are stored open (but for what an active rule
// dismisses at ingestion), counted exactly in the scan's and the
// project's lists however often they are written, and another company
// sees none; a rule applied later gives its status to the findings it
// still changes, by the rule, once.
func TestSCAFindingsAndRules(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{Via: ledger.ViaAPIKey, UserID: 5, KeyID: 1})
	pkg0, err := w.rules.CreateTriageRule(ctx, triage.Rule{CompanyID: 1, ProjectID: 3, Enabled: true, CreatedBy: 5,
		Matcher: triagemodel.Matcher{Package: "pkg0", Ecosystem: "npm"}, Action: triagemodel.Action{Status: "false_positive", Reason: "test only"}})
	if err != nil {
		t.Fatal(err)
	}
	sc := scans.Scan{ID: "0b8f4a52-8c1e-4e7a-9d3b-2f6c5a1e0d94", CompanyID: 1, ProjectID: 3, Branch: "main", Engine: "osv", Tool: "osv", CreatedAt: "2026-11-27T10:00:00Z"}
	found := findings(sc, 30)
	for range 2 {
		if err := w.sca.PutScanSCAIssues(ctx, 1, sc, found); err != nil {
			t.Fatal(err)
		}
	}
	statuses := func() map[string]int {
		t.Helper()
		out := map[string]int{}
		if err := w.sca.EachSCAIssue(ctx, 1, func(i sca.Issue) error { out[i.Status]++; return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if s := statuses(); s["open"] != 20 || s["false_positive"] != 10 {
		t.Fatalf("after ingestion: %v", s)
	}
	if i, err := w.sca.GetSCAIssue(ctx, 1, found[0].ID); err != nil || i.Status != "false_positive" || i.TriageRuleID != pkg0.ID || i.Reason != "test only" {
		t.Fatalf("a finding of pkg0: %+v %v", i, err)
	}
	project, err := w.sca.ListSCAIssues(ctx, 1, 3, page.Request{Limit: 1})
	if err != nil || project.Count() != 30 {
		t.Fatalf("project total %d %v", project.Count(), err)
	}
	got, err := w.sca.ListScanSCAIssues(ctx, 1, sc.ID, page.Request{Limit: 25})
	if err != nil || got.Count() != 30 || len(got.Items) != 25 || got.Next == "" {
		t.Fatalf("scan page: %d of %d %v", len(got.Items), got.Count(), err)
	}
	if other, err := w.sca.ListSCAIssues(ctx, 2, 3, page.Request{Limit: 10}); err != nil || other.Count() != 0 {
		t.Fatalf("another company: %d %v", other.Count(), err)
	}

	ignore, err := w.rules.CreateTriageRule(ctx, triage.Rule{CompanyID: 1, Enabled: true, CreatedBy: 5,
		Matcher: triagemodel.Matcher{Package: "pkg1"}, Action: triagemodel.Action{Status: "false_positive", Reason: "vendored"}})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := w.sca.RuleTargets(ctx, 1, ignore.Model(), 0)
	if err != nil || len(ids) != 10 {
		t.Fatalf("targets %d %v", len(ids), err)
	}
	done, err := w.sca.ApplyRule(ctx, 1, ignore.Model(), ids)
	if err != nil || len(done) != 10 {
		t.Fatalf("applied to %d: %v", len(done), err)
	}
	if s := statuses(); s["open"] != 10 || s["false_positive"] != 20 {
		t.Fatalf("after the rule: %v", s)
	}
	if again, err := w.sca.RuleTargets(ctx, 1, ignore.Model(), 0); err != nil || len(again) != 0 {
		t.Fatalf("targets after the rule: %v %v", again, err)
	}
	if after, _ := w.sca.ListSCAIssues(ctx, 1, 3, page.Request{Limit: 1}); after.Count() != 30 {
		t.Fatalf("project total after the rule: %d", after.Count())
	}
}
