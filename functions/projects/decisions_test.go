package projects_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

// decided is what the API shows of an issue's triage.
type decided struct {
	Status   string
	Reason   *string
	Decision *struct {
		Scope     string `json:"scope"`
		DecidedBy *int64 `json:"decided_by"`
		DecidedAt string `json:"decided_at"`
		Source    string `json:"source"`
	}
}

// patchIssue sends PATCH /issue/{id} as the company's admin.
func (w *world) patchIssue(t *testing.T, c *testenv.Company, id, body string) *testenv.Response {
	t.Helper()
	return testenv.Do(t, w.h, "PATCH", "/issue/"+id, body, testenv.Key(c.Admin)...)
}

// A triage decision follows the finding (docs/findings.md): made on main,
// it reaches the finding's issue on an existing branch at once and on a
// new branch's first scan, whose gate then does not count it; a fixed
// issue keeps fixed until its finding comes back, then takes it; a branch
// overrides it; setting open withdraws it everywhere but the override.
// Counts stay exact throughout, and another company sees none of it.
func TestDecisionsFollowTheFinding(t *testing.T) {
	w := newWorld(t)
	// A rule without statuses judges every status (dismissed ones too):
	// the gate here judges what is open.
	w.rule(t, w.acme, `{"slug":"open","name":"Open findings","conditions":{"statuses":["open"]}}`)
	sqli, xss, added := result("sqli", "src/db.py", 4), result("xss", "web/a.js", 2), result("sqli", "src/new.py", 9)
	main := w.upload(t, w.acme, "payments", "main", sarif(sqli, xss))
	w.upload(t, w.acme, "payments", "release", sarif(sqli, xss))
	w.upload(t, w.acme, "payments", "hotfix", sarif(sqli, xss))
	w.upload(t, w.acme, "payments", "hotfix", sarif(xss)) // sqli fixed on hotfix
	foreign := w.upload(t, w.other, "payments", "main", sarif(sqli, xss))

	var finding findings.Issue
	for _, i := range w.issues(t, main.ScanID) {
		if i.FilePath == "src/db.py" {
			finding = i
		}
	}
	on := func(branch string) string {
		return findings.IssueID(w.acme.ID, main.ProjectID, branch, finding.Tool, finding.Fingerprint)
	}
	show := func(branch string) decided {
		t.Helper()
		var out struct{ Issue decided }
		w.get(t, w.acme.Admin, "/issue/"+on(branch)).Decode(t, &out)
		return out.Issue
	}
	history := func(branch string) []findings.HistoryEntry {
		t.Helper()
		var out struct{ History []findings.HistoryEntry }
		w.get(t, w.acme.Admin, "/issue/"+on(branch)+"/history").Decode(t, &out)
		return out.History
	}
	wantDecision := func(branch, status, scope, source string) {
		t.Helper()
		d := show(branch)
		if d.Status != status || (scope == "") != (d.Decision == nil) || d.Decision != nil && (d.Decision.Scope != scope || d.Decision.Source != source ||
			d.Decision.DecidedBy == nil || *d.Decision.DecidedBy != w.acme.Admin.ID || d.Decision.DecidedAt == "") {
			t.Fatalf("%s: want %s (decision %q from %q), got %+v %+v", branch, status, scope, source, d, d.Decision)
		}
	}
	note := fmt.Sprintf("decision on main by user %d", w.acme.Admin.ID)

	// Bad scope: 400, nothing changed.
	if res := w.patchIssue(t, w.acme, on("main"), `{"status":"false_positive","scope":"everywhere"}`); res.Status != 400 {
		t.Fatalf("bad scope: %d %s", res.Status, res.Body)
	}
	wantDecision("main", "open", "", "")

	// Decided on main: release's issue follows at once, hotfix's stays fixed.
	if res := w.patchIssue(t, w.acme, on("main"), `{"status":"false_positive","reason":"test data"}`); res.Status != 200 {
		t.Fatalf("patch: %d %s", res.Status, res.Body)
	}
	wantDecision("main", "false_positive", "project", "main")
	wantDecision("release", "false_positive", "project", "main")
	if d := show("release"); d.Reason == nil || *d.Reason != "test data" {
		t.Fatalf("release's reason: %+v", d)
	}
	if h := history("release"); len(h) != 1 || h[0].From != "open" || h[0].To != "false_positive" || h[0].Reason != note || h[0].By.UserID != w.acme.Admin.ID {
		t.Fatalf("release's history: %+v", h)
	}
	wantDecision("hotfix", "fixed", "", "")
	testenv.Recount(t, w.env.Store, w.acme.ID)

	// A new branch's first scan: the finding arrives false_positive, the
	// gate judges only the new finding, and only it is announced.
	feature := w.upload(t, w.acme, "payments", "feature", sarif(sqli, xss, added))
	wantDecision("feature", "false_positive", "project", "main")
	if h := history("feature"); len(h) != 1 || h[0].To != "false_positive" || h[0].Reason != note {
		t.Fatalf("feature's history: %+v", h)
	}
	var a gateAnswer
	w.get(t, w.acme.Admin, "/scan/"+feature.ScanID+"/check_blocking_rules?page=1&block_on=open").Decode(t, &a)
	var newID string
	for _, i := range w.issues(t, feature.ScanID) {
		if i.FilePath == "src/new.py" {
			newID = i.ID
		}
	}
	if !a.Block || a.Stats.BlockedIssues != 1 || a.BlockingIssues[0].ID != newID {
		t.Fatalf("the feature gate: %+v", a)
	}
	// And without a baseline, the decided finding is still not judged.
	w.get(t, w.acme.Admin, "/scan/"+feature.ScanID+"/check_blocking_rules?page=1&block_on=open&baseline=").Decode(t, fresh(&a))
	for _, b := range a.BlockingIssues {
		if b.ID == on("feature") {
			t.Fatalf("the decided finding blocks: %+v", a)
		}
	}
	if e, ok := testenv.OutboxEvent(t, w.env.Store, w.acme.ID, "new_critical_issue-"+feature.ScanID); !ok || e["count"] != float64(1) {
		t.Fatalf("new critical event: %v", e)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)

	// The finding comes back on hotfix: it takes the decision, not open.
	w.upload(t, w.acme, "payments", "hotfix", sarif(sqli, xss))
	wantDecision("hotfix", "false_positive", "project", "main")
	if h := history("hotfix"); len(h) != 2 || h[1].From != "fixed" || h[1].To != "false_positive" || h[1].Reason != "reported again; "+note {
		t.Fatalf("hotfix's history: %+v", h)
	}

	// release overrides; a later project decision passes it by.
	if res := w.patchIssue(t, w.acme, on("release"), `{"status":"open","scope":"Branch"}`); res.Status != 200 {
		t.Fatalf("override: %d %s", res.Status, res.Body)
	}
	wantDecision("release", "open", "branch", "release")
	wantDecision("main", "false_positive", "project", "main")
	if res := w.patchIssue(t, w.acme, on("main"), `{"status":"accepted_risk","reason":"fix ships in May"}`); res.Status != 200 {
		t.Fatalf("patch: %d %s", res.Status, res.Body)
	}
	for _, b := range []string{"main", "feature", "hotfix"} {
		wantDecision(b, "accepted_risk", "project", "main")
	}
	wantDecision("release", "open", "branch", "release")
	testenv.Recount(t, w.env.Store, w.acme.ID)

	// Withdrawn from feature: open everywhere it applied; the override stays.
	if res := w.patchIssue(t, w.acme, on("feature"), `{"status":"open"}`); res.Status != 200 {
		t.Fatalf("withdraw: %d %s", res.Status, res.Body)
	}
	for _, b := range []string{"main", "feature", "hotfix"} {
		wantDecision(b, "open", "", "")
	}
	wantDecision("release", "open", "branch", "release")
	if h := history("main"); h[len(h)-1].Reason != fmt.Sprintf("decision withdrawn on feature by user %d", w.acme.Admin.ID) {
		t.Fatalf("main's history: %+v", h)
	}
	later := w.upload(t, w.acme, "payments", "later", sarif(sqli))
	wantDecision("later", "open", "", "")
	if e, ok := testenv.OutboxEvent(t, w.env.Store, w.acme.ID, "new_critical_issue-"+later.ScanID); !ok || e["count"] != float64(1) {
		t.Fatalf("new critical event after the withdrawal: %v", e)
	}
	w.get(t, w.acme.Admin, "/scan/"+later.ScanID+"/check_blocking_rules?page=1&block_on=open&baseline=").Decode(t, fresh(&a))
	if a.Stats.BlockedIssues != 1 || a.BlockingIssues[0].ID != on("later") {
		t.Fatalf("the withdrawn finding does not block: %+v", a)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)

	// Tenant isolation: the other company's finding of the same code never
	// took a decision, and its admin's PATCH of an Acme issue answers as a
	// missing id does, changing nothing.
	for _, i := range w.issuesOf(t, w.other, foreign.ScanID) {
		if i.Status != "open" || i.Decision != (schema.DecisionMark{}) {
			t.Fatalf("the other company's issue moved: %+v", i)
		}
	}
	theirs := w.patchIssue(t, w.other, on("release"), `{"status":"false_positive"}`)
	missing := w.patchIssue(t, w.other, uuid.NewString(), `{"status":"false_positive"}`)
	if theirs.Status != 404 || string(theirs.Body) != string(missing.Body) {
		t.Fatalf("foreign: %d %s / %d %s", theirs.Status, theirs.Body, missing.Status, missing.Body)
	}
	wantDecision("release", "open", "branch", "release")
	testenv.Recount(t, w.env.Store, w.acme.ID)
	testenv.Recount(t, w.env.Store, w.other.ID)
}

// issuesOf is issues of another company's scan.
func (w *world) issuesOf(t *testing.T, c *testenv.Company, scanID string) []findings.Issue {
	t.Helper()
	var out []findings.Issue
	if err := w.env.Store.Lists.EachScanIssue(context.Background(), c.ID, scanID, func(i findings.Issue) error {
		out = append(out, i)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no issues")
	}
	return out
}
