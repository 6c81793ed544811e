package triage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/triagemodel"
)

var semgrepFP = triagemodel.Action{Status: "false_positive", Reason: "generated code"}

// rule stores an active rule of the company acting on semgrep's findings.
func (a *areas) rule(t *testing.T, company, project int64) triage.Rule {
	t.Helper()
	r, err := a.triage.CreateTriageRule(context.Background(), triage.Rule{CompanyID: company, ProjectID: project, Enabled: true, CreatedBy: 5,
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
	dry, err := a.triage.ApplyTriageRuleAll(ctx, 1, r.ID, true, 5)
	if err != nil || dry.Changed != 20+4 || dry.Operation != nil {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if s := a.statuses(t, 1); fmt.Sprint(s) != fmt.Sprint(before) {
		t.Fatalf("a dry run changed %v to %v", before, s)
	}
	done, err := a.triage.ApplyTriageRuleAll(ctx, 1, r.ID, false, 5)
	if err != nil || done.Changed != dry.Changed || done.Operation != nil || len(done.Sample) != min(dry.Changed, 20) || done.Sample[0] != dry.Sample[0] {
		t.Fatalf("applied: %+v %v", done, err)
	}
	if s := a.statuses(t, 1); s["open"] != 0 || s["false_positive"] != 30 {
		t.Fatalf("SAST after: %v", s)
	}
	if s := a.scaStatuses(t, 1); s["false_positive"] != 4 || len(s) != 1 {
		t.Fatalf("SCA after: %v", s)
	}
	if again, err := a.triage.ApplyTriageRuleAll(ctx, 1, r.ID, false, 5); err != nil || again.Changed != 0 {
		t.Fatalf("again: %+v %v", again, err)
	}
	if _, err := a.triage.SetTriageRuleEnabled(ctx, 1, r.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.triage.ApplyTriageRuleAll(ctx, 1, r.ID, false, 5); !errors.Is(err, triage.ErrRuleInactive) {
		t.Fatalf("a disabled rule: %v", err)
	}
	if res, err := a.triage.ApplyTriageRuleAll(ctx, 1, r.ID, true, 5); err != nil || res.Changed != 0 {
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
	op, err := a.triage.CreateRuleOp(ctx, schema.TriageOpItem{CompanyID: 1, UserID: 5, RuleID: r.ID, Status: r.Action.Status, Reason: r.Action.Reason}, triage.RuleApplyAudit(r, 0))
	if err != nil {
		t.Fatal(err)
	}
	first, ok, err := a.triage.StartTriageOp(ctx, 1, op.ID, 5)
	if err != nil || !ok {
		t.Fatalf("start: %v %v", ok, err)
	}
	second := first // the other delivery's copy
	for first.State == triage.OpCollecting {
		next, err := a.triage.CollectRulePage(ctx, first, 8)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.triage.CollectRulePage(ctx, second, 8); !errors.Is(err, ddb.ErrConflict) {
			t.Fatalf("the same page collected by the other delivery: %v", err)
		}
		second, first = first, next
	}
	if first.State != triage.OpApplying || first.Matched != 40+7 {
		t.Fatalf("collected %+v, want 40 issues and 7 SCA findings", first)
	}
	second = first
	for first.Page < first.Pages {
		next, err := a.triage.ApplyTriagePage(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		// The other delivery, at the page the first just applied, finds it
		// applied and resumes from the checkpoint: nothing twice.
		late, err := a.triage.ApplyTriagePage(ctx, second)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := a.triage.GetTriageOp(ctx, 1, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		if late.Page < next.Page || stored.Changed < next.Changed {
			t.Fatalf("the late delivery went back: late %+v, stored %+v, first %+v", late, stored, next)
		}
		first, second = stored, stored
	}
	if err := a.triage.FinishTriageOp(ctx, first); err != nil {
		t.Fatal(err)
	}
	done, err := a.triage.GetTriageOp(ctx, 1, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	after, afterSCA := a.statuses(t, 1), a.scaStatuses(t, 1)
	changed := after["false_positive"] - before["false_positive"] + afterSCA["false_positive"] - beforeSCA["false_positive"]
	if done.State != triage.OpDone || done.Processed != done.Matched || done.Changed != int64(changed) || changed != 40+7 {
		t.Fatalf("done %+v; %d changed (SAST %v -> %v, SCA %v -> %v)", done, changed, before, after, beforeSCA, afterSCA)
	}
	if after["open"] != 6 { // Lib's open issues
		t.Fatalf("statuses %v", after)
	}
}
