package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// scaFinding is an SCA finding a scan reports: package, ecosystem,
// manifest, severity, advisory ids (the primary first) and CWE.
type scaFinding struct {
	pkg, eco, manifest, severity string
	ids                          []string
	cwe                          int
}

// scaScan writes the SCA findings of a scan of the world's project.
func (w *branchWorld) scaScan(t *testing.T, company int64, fs ...scaFinding) (scans.Scan, []string) {
	t.Helper()
	ctx := context.Background()
	w.clock = w.clock.Add(time.Minute)
	sc, err := w.st.Scans.CreateScan(ctx, scans.Scan{ID: uuid.NewString(), CompanyID: company, ProjectID: w.project, Branch: "main", Engine: "osv",
		Tool: "osv-scanner", Status: scans.ScanProcessing, CreatedAt: w.clock.Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	var found []sca.Issue
	var ids []string
	for _, f := range fs {
		i := sca.Issue{ID: findings.IssueID(company, w.project, "main", "osv-scanner", f.pkg+"|"+f.ids[0]), ProjectID: w.project, Branch: "main",
			Tool: "osv-scanner", IDs: f.ids, Classification: f.ids[0], Severity: f.severity, CWE: f.cwe,
			Package: sca.Package{Name: f.pkg, Version: "1.0.0", Ecosystem: f.eco}, Location: sca.Location{Path: f.manifest}}
		for _, id := range f.ids {
			if len(id) > 4 && id[:4] == "CVE-" && i.CVE == "" {
				i.CVE = id
			}
		}
		found = append(found, i)
		ids = append(ids, i.ID)
	}
	if err := w.st.SCA.PutScanSCAIssues(ctx, company, sc, found); err != nil {
		t.Fatal(err)
	}
	return sc, ids
}

// triageRule stores an active rule of the API form body.
func triageRule(t *testing.T, ctx context.Context, st *store.Store, company, project int64, body string) string {
	t.Helper()
	var b triagemodel.Body
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	m, a, err := triagemodel.Parse(b, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.Triage.CreateTriageRule(ctx, triage.Rule{CompanyID: company, ProjectID: project, CreatedBy: 5, Enabled: true, Matcher: m, Action: a})
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// Triage rules reach SCA findings: at ingestion a new finding, or an open
// one reported again, arrives with the status and reason of the rule that
// matches it (package and ecosystem, an advisory alias as rule_id, a path
// glob on the manifest, urgency bounds on the severity's urgency), naming
// the rule; a dismissed finding keeps its status; urgency rules, another
// project's and another company's rules do nothing. Counts stay exact. An
// application changes exactly what its dry run counts, SAST issues and
// SCA findings together, once, audited.
func TestTriageRulesReachSCAFindings(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	const other = 12
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{UserID: 5, Via: ledger.ViaBearer})
	lodash := scaFinding{"lodash", "npm", "web/package-lock.json", "HIGH", []string{"GHSA-35jh-r3h4-6jhm", "CVE-2021-23337"}, 0}
	minimist := scaFinding{"minimist", "npm", "tools/package-lock.json", "CRITICAL", []string{"GHSA-xvch-5gv4-984h", "CVE-2021-44906"}, 0}
	leftPad := scaFinding{"left-pad", "npm", "tools/yarn.lock", "LOW", []string{"GHSA-0000-0000-0001"}, 0}
	requests := scaFinding{"requests", "PyPI", "api/requirements.txt", "LOW", []string{"PYSEC-2023-74", "CVE-2023-32681"}, 0}
	urllib3 := scaFinding{"urllib3", "PyPI", "api/requirements.txt", "MODERATE", []string{"GHSA-v845-jxx5-vc9f"}, 0}
	lodashOld := scaFinding{"lodash", "npm", "web/package-lock.json", "CRITICAL", []string{"GHSA-p6mc-m468-83gw"}, 0}
	tar := scaFinding{"tar", "npm", "web/package-lock.json", "HIGH", []string{"GHSA-f5x3-32g6-xq36"}, 22}

	// A SAST issue the path rule below matches too.
	sast, _ := w.scan(t, "main", "gosec", finding{"tools/gen", 78})
	_, before := w.scaScan(t, w.company, lodash, minimist, leftPad, requests)
	_, otherIDs := w.scaScan(t, other, lodash)

	triageRule(t, ctx, w.st, w.company, 0, `{"matcher":{"package":"LODASH","ecosystem":"npm"},"action":{"status":"false_positive","reason":"not shipped"}}`)
	alias := triageRule(t, ctx, w.st, w.company, w.project, `{"matcher":{"rule_id":"CVE-2021-44906"},"action":{"status":"fix_in_progress","reason":"SEC-9"}}`)
	triageRule(t, ctx, w.st, w.company, 0, `{"matcher":{"ecosystem":"pypi"},"action":{"urgency":"LO"}}`)
	bounded := triageRule(t, ctx, w.st, w.company, 0, `{"matcher":{"path":"api/**","urgency_at_least":"ME"},"action":{"status":"false_positive","reason":"internal API"}}`)
	byCWE := triageRule(t, ctx, w.st, w.company, 0, `{"matcher":{"cwe":"CWE-22"},"action":{"status":"false_positive","reason":"no untrusted archives"}}`)
	triageRule(t, ctx, w.st, w.company, w.project+1, `{"matcher":{"tool":"osv-scanner"},"action":{"status":"false_positive"}}`)
	triageRule(t, ctx, w.st, other, 0, `{"matcher":{"tool":"osv-scanner"},"action":{"status":"false_positive"}}`)

	get := func(company int64, id string) sca.Issue {
		t.Helper()
		i, err := w.st.SCA.GetSCAIssue(context.Background(), company, id)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	// Reported again (open: the rules act) with two new findings.
	sc, ids := w.scaScan(t, w.company, lodash, minimist, leftPad, requests, urllib3, lodashOld, tar)
	if !slices.Equal(ids[:4], before) {
		t.Fatalf("ids moved: %v %v", ids, before)
	}
	firstLodash := get(w.company, ids[0])
	want := map[string][3]string{ // status, reason, rule (the rule's id looked up below)
		ids[0]: {"false_positive", "not shipped", "lodash"}, ids[1]: {"fix_in_progress", "SEC-9", alias}, ids[2]: {"open", "", ""},
		ids[3]: {"open", "", ""}, ids[4]: {"false_positive", "internal API", bounded}, ids[5]: {"false_positive", "not shipped", "lodash"},
		ids[6]: {"false_positive", "no untrusted archives", byCWE},
	}
	lodashRule := firstLodash.TriageRuleID
	for id, wt := range want {
		if wt[2] == "lodash" {
			wt[2] = lodashRule
		}
		i := get(w.company, id)
		if i.Status != wt[0] || i.Reason != wt[1] || i.TriageRuleID != wt[2] {
			t.Errorf("%s %s: %q %q %q, want %v", i.Package.Name, i.Classification, i.Status, i.Reason, i.TriageRuleID, wt)
		}
	}
	if lodashRule == "" || get(other, otherIDs[0]).Status != "open" {
		t.Fatalf("lodash: %+v; another company's: %+v", firstLodash, get(other, otherIDs[0]))
	}
	if i := get(w.company, ids[0]); i.CreatedAt != w.clock.Add(-2*time.Minute).Format(time.RFC3339) {
		t.Fatalf("first detection moved: %s", i.CreatedAt)
	}
	// A rule that would reopen or move the dismissed finding does not.
	triageRule(t, ctx, w.st, w.company, w.project, `{"matcher":{"package":"lodash"},"action":{"status":"fix_in_progress","reason":"later"}}`)
	w.scaScan(t, w.company, lodash)
	if i := get(w.company, ids[0]); i.Status != "false_positive" || i.Reason != "not shipped" {
		t.Fatalf("a dismissed finding reported again: %+v", i)
	}
	// Totals: every finding once, whatever its status.
	one := page.Request{Limit: 1}
	company, err1 := w.st.SCA.ListSCAIssues(ctx, w.company, 0, one)
	project, err2 := w.st.SCA.ListSCAIssues(ctx, w.company, w.project, one)
	scan, err3 := w.st.SCA.ListScanSCAIssues(ctx, w.company, sc.ID, one)
	if err := errors.Join(err1, err2, err3); err != nil || company.Count() != 7 || project.Count() != 7 || scan.Count() != 7 {
		t.Fatalf("totals %d %d %d %v", company.Count(), project.Count(), scan.Count(), err)
	}
	testenv.Recount(t, w.st, w.company)

	// An application: the SAST issue under tools/ and the two SCA findings
	// still to act on there (minimist in progress, left-pad open).
	tools := triageRule(t, ctx, w.st, w.company, 0, `{"matcher":{"path":"**/tools/**"},"action":{"status":"false_positive","reason":"vendored tooling"}}`)
	gen := findings.IssueID(w.company, w.project, "main", "gosec", "tools/gen")
	dry, err := w.st.Triage.ApplyTriageRuleAll(ctx, w.company, tools, true, 5)
	scaPart := []string{ids[1], ids[2]}
	slices.Sort(scaPart) // the company's list, by id
	if err != nil || dry.Changed != 3 || !slices.Equal(dry.Sample, append([]string{gen}, scaPart...)) {
		t.Fatalf("dry run: %+v %v (sast %s)", dry, err, sast.ID)
	}
	if i := get(w.company, ids[2]); i.Status != "open" {
		t.Fatal("a dry run changed a finding")
	}
	if _, err := w.st.Triage.ApplyTriageRuleAll(ctx, other, tools, true, 5); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("another company's rule: %v", err)
	}
	if _, err := w.st.Triage.SetTriageRuleEnabled(ctx, w.company, tools, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.Triage.ApplyTriageRuleAll(ctx, w.company, tools, false, 5); !errors.Is(err, triage.ErrRuleInactive) {
		t.Fatalf("an inactive rule: %v", err)
	}
	if _, err := w.st.Triage.SetTriageRuleEnabled(ctx, w.company, tools, true); err != nil {
		t.Fatal(err)
	}
	applied, err := w.st.Triage.ApplyTriageRuleAll(ctx, w.company, tools, false, 5)
	if err != nil || applied.Changed != dry.Changed || !slices.Equal(applied.Sample, dry.Sample) {
		t.Fatalf("apply: %+v %v, dry run %+v", applied, err, dry)
	}
	for _, id := range ids[1:3] {
		if i := get(w.company, id); i.Status != "false_positive" || i.Reason != "vendored tooling" || i.TriageRuleID != tools {
			t.Errorf("after apply: %+v", i)
		}
	}
	if i := w.issue(t, "main", "gosec", "tools/gen"); i.Status != "false_positive" {
		t.Errorf("the SAST issue after apply: %s", i.Status)
	}
	for _, dryRun := range []bool{false, true} {
		if again, err := w.st.Triage.ApplyTriageRuleAll(ctx, w.company, tools, dryRun, 5); err != nil || again.Changed != 0 {
			t.Fatalf("again (dry run %t): %+v %v", dryRun, again, err)
		}
	}
	// The SAST application's entries (one per application, 0 when nothing
	// changed) and the SCA change's, once.
	audited := func(action, key string) []any {
		t.Helper()
		entriesPage, err := w.st.Tenancy.ListAudit(ctx, w.company, tenancy.AuditFilter{Action: action}, page.Request{Limit: 10})
		entries := entriesPage.Items
		if err != nil {
			t.Fatal(err)
		}
		var out []any
		for _, e := range entries {
			if e.TargetID != tools {
				t.Errorf("%s names %s", action, e.TargetID)
			}
			out = append(out, e.Changes[key].After)
		}
		return out
	}
	if got := audited("triage_rule.apply", "issues_changed"); len(got) != 2 || !slices.Contains(got, any(1.0)) || !slices.Contains(got, any(0.0)) {
		t.Errorf("triage_rule.apply entries: %v", got)
	}
	if got := audited("triage_rule.apply_sca", "sca_findings_changed"); len(got) != 1 || got[0] != 2.0 {
		t.Errorf("triage_rule.apply_sca entries: %v", got)
	}
	testenv.Recount(t, w.st, w.company)
}
