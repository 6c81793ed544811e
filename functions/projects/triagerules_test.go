package projects_test

import (
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	storefindings "github.com/acme/codescan-api/shared/store/findings"
)

// triageRule creates a triage rule as the company admin and returns its id.
func (w *world) triageRule(t *testing.T, c *testenv.Company, body string) string {
	t.Helper()
	res := testenv.Do(t, w.h, "POST", "/triage-rules", body, testenv.Key(c.Admin)...)
	if res.Status != 201 {
		t.Fatalf("triage rule: %d %s", res.Status, res.Body)
	}
	var out struct{ Rule struct{ ID string } }
	res.Decode(t, &out)
	return out.Rule.ID
}

// byPlace is the scan's issues by "rule path".
func (w *world) byPlace(t *testing.T, scanID string) map[string]storefindings.Issue {
	out := map[string]storefindings.Issue{}
	for _, i := range w.issues(t, scanID) {
		out[i.RuleID+" "+i.FilePath] = i
	}
	return out
}

// Rules created before an upload act on its new findings before anything
// sees them: a dismissed finding is not announced and does not block, an
// urgency rule's urgency is what counts and stays, the history names the
// rule, counts are exact. Existing issues change only by an application,
// whose dry run counts exactly what it changes.
func TestTriageRulesAtIngestion(t *testing.T) {
	w := newWorld(t)
	w.rule(t, w.acme, `{"slug":"crit","name":"Critical","conditions":{"min_urgency":"CR","statuses":["open","fix_in_progress"]}}`)
	fixtures := w.triageRule(t, w.acme, `{"matcher":{"rule_id":"sqli","path":"test/**"},"action":{"status":"false_positive","reason":"test fixtures"}}`)
	lower := w.triageRule(t, w.acme, `{"matcher":{"rule_id":"xss","path":"web/**"},"action":{"urgency":"LO"}}`)
	// Awaiting approval: it acts on nothing.
	w.triageRule(t, w.acme, `{"matcher":{"rule_id":"sqli"},"action":{"status":"false_positive"},"requires_approval":true}`)
	// Another company's rule never reaches Acme's findings.
	w.triageRule(t, w.other, `{"matcher":{"rule_id":"sqli"},"action":{"status":"false_positive"}}`)

	findings := sarif(result("sqli", "test/a.py", 3), result("sqli", "src/db.py", 4), result("xss", "web/a.js", 2), result("xss", "src/x.js", 9))
	first := w.upload(t, w.acme, "payments", "main", findings)
	got := w.byPlace(t, first.ScanID)
	dismissed, kept, lowered := got["sqli test/a.py"], got["sqli src/db.py"], got["xss web/a.js"]
	if dismissed.Status != "false_positive" || dismissed.Reason != "test fixtures" || kept.Status != "open" ||
		lowered.Status != "open" || lowered.Urgency != "LO" || got["xss src/x.js"].Urgency != "HI" {
		t.Fatalf("first scan: %+v", got)
	}
	// Only what is left to act on is announced.
	for typ, want := range map[string]float64{"new_critical_issue": 1, "new_high_issue": 1} {
		ev, ok := testenv.OutboxEvent(t, w.env.Store, w.acme.ID, typ+"-"+first.ScanID)
		if !ok {
			t.Fatalf("no %s", typ)
		}
		if n := ev["count"]; n != want {
			t.Errorf("%s count %v, want %v: %v", typ, n, want, ev)
		}
	}
	var a gateAnswer
	w.get(t, w.acme.Admin, "/scan/"+first.ScanID+"/check_blocking_rules?page=1&block_on=crit").Decode(t, &a)
	if a.Stats.BlockedIssues != 1 || a.BlockingIssues[0].ID != kept.ID {
		t.Fatalf("gate: %+v", a)
	}
	var hist struct {
		History []struct {
			From, To, Reason string
			By               struct {
				ScanID string `json:"scan_id"`
				RuleID string `json:"rule_id"`
			}
		} `json:"history"`
	}
	w.get(t, w.acme.Admin, "/issue/"+dismissed.ID+"/history").Decode(t, &hist)
	if len(hist.History) != 1 || hist.History[0].From != "open" || hist.History[0].To != "false_positive" ||
		hist.History[0].By.RuleID != fixtures || hist.History[0].By.ScanID != first.ScanID || hist.History[0].Reason != "triage rule "+fixtures+": test fixtures" {
		t.Fatalf("history %+v", hist)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)

	// The same findings again: nothing moves, the rule's urgency stays.
	second := w.upload(t, w.acme, "payments", "main", findings)
	if got := w.byPlace(t, second.ScanID); got["xss web/a.js"].Urgency != "LO" || got["sqli test/a.py"].Status != "false_positive" {
		t.Fatalf("second scan: %+v", got)
	}
	// A rule created now leaves existing issues to an application.
	if res := testenv.Do(t, w.h, "POST", "/triage-rules", `{"matcher":{"cwe":"89"},"action":{"status":"accepted_risk","reason":"x","expires_at":"2099-01-01T00:00:00Z"}}`, testenv.Key(w.acme.Admin)...); res.Status != 400 {
		t.Fatalf("an expiry beyond a year: %d %s", res.Status, res.Body)
	}
	scoped := w.triageRule(t, w.acme, fmt.Sprintf(`{"project_id":%d,"matcher":{"rule_id":"sqli"},"action":{"status":"fix_in_progress","reason":"ticket SEC-1"}}`, first.ProjectID))
	third := w.upload(t, w.acme, "payments", "main", findings)
	if got := w.byPlace(t, third.ScanID); got["sqli src/db.py"].Status != "open" {
		t.Fatalf("ingestion changed an existing issue: %+v", got)
	}
	apply := func(id, query string) (changed int, sample []string) {
		t.Helper()
		res := testenv.Do(t, w.h, "POST", "/triage-rules/"+id+"/apply"+query, "", testenv.Key(w.acme.Admin)...)
		if res.Status != 200 {
			t.Fatalf("apply%s: %d %s", query, res.Status, res.Body)
		}
		var out struct {
			Changed int      `json:"changed"`
			Sample  []string `json:"sample_issue_ids"`
		}
		res.Decode(t, &out)
		return out.Changed, out.Sample
	}
	// The project rule: src/db.py is open (test/a.py is dismissed already).
	if n, ids := apply(scoped, "?dry_run=true"); n != 1 || len(ids) != 1 || ids[0] != kept.ID {
		t.Fatalf("dry run: %d %v", n, ids)
	}
	if got := w.byPlace(t, third.ScanID); got["sqli src/db.py"].Status != "open" {
		t.Fatal("a dry run changed an issue")
	}
	if n, ids := apply(scoped, ""); n != 1 || ids[0] != kept.ID {
		t.Fatalf("apply: %d %v", n, ids)
	}
	if got := w.byPlace(t, third.ScanID); got["sqli src/db.py"].Status != "fix_in_progress" || got["sqli src/db.py"].Reason != "ticket SEC-1" {
		t.Fatalf("after apply: %+v", got["sqli src/db.py"])
	}
	if n, _ := apply(scoped, ""); n != 0 {
		t.Fatalf("a second apply changed %d", n)
	}
	if n, _ := apply(scoped, "?dry_run=1"); n != 0 {
		t.Fatalf("a dry run after apply counts %d", n)
	}
	// An urgency rule applied: the HI xss under src/ goes LO once.
	srcXSS := w.triageRule(t, w.acme, `{"matcher":{"rule_id":"xss","urgency_at_least":"HI"},"action":{"urgency":"LO"}}`)
	if n, _ := apply(srcXSS, "?dry_run=true"); n != 1 {
		t.Fatalf("urgency dry run %d", n)
	}
	if n, _ := apply(srcXSS, ""); n != 1 {
		t.Fatalf("urgency apply %d", n)
	}
	if got := w.byPlace(t, third.ScanID); got["xss src/x.js"].Urgency != "LO" {
		t.Fatalf("urgency apply: %+v", got["xss src/x.js"])
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)
	// The rule named by another company is a missing one.
	if res := testenv.Do(t, w.h, "POST", "/triage-rules/"+scoped+"/apply?dry_run=true", "", testenv.Key(w.other.Admin)...); res.Status != 404 {
		t.Fatalf("other company: %d %s", res.Status, res.Body)
	}
	_ = lower
}
