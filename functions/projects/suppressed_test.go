package projects_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/findings"
)

// suppressedResult is a SARIF result the code suppresses (a nosemgrep
// comment, as Semgrep reports it), with a justification.
func suppressedResult(rule, path string, line int, why string) string {
	r := result(rule, path, line)
	return strings.TrimSuffix(r, "}") + fmt.Sprintf(`,"suppressions":[{"kind":"inSource","justification":%q}]}`, why)
}

// A finding the code suppresses arrives suppressed: no open count, no
// new-issue event, never blocking; removing the suppression reopens it
// ("suppression removed"), an open issue the code comes to suppress
// becomes suppressed, and people's triage outranks the code.
func TestSuppressedFindings(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.rule(t, w.acme, `{"slug":"all","name":"Everything"}`)
	first := w.upload(t, w.acme, "payments", "main", sarif(suppressedResult("sqli", "src/db.py", 4, "test fixture"), result("xss", "web/a.js", 2)))
	byPath := func() map[string]string { // file path -> "status|reason"
		out := map[string]string{}
		for _, i := range w.issues(t, first.ScanID) {
			out[i.FilePath] = i.Status + "|" + i.Reason
		}
		return out
	}
	sqli := w.issues(t, first.ScanID)
	var sqliID string
	for _, i := range sqli {
		if i.FilePath == "src/db.py" {
			sqliID = i.ID
		}
	}
	if got := byPath(); got["src/db.py"] != "suppressed|test fixture" || got["web/a.js"] != "open|" {
		t.Fatalf("first scan: %v", got)
	}
	// The only critical is suppressed: no new_critical_issue event.
	if _, ok := testenv.OutboxEvent(t, w.env.Store, w.acme.ID, "new_critical_issue-"+first.ScanID); ok {
		t.Fatal("a suppressed critical announced")
	}
	if _, ok := testenv.OutboxEvent(t, w.env.Store, w.acme.ID, "new_high_issue-"+first.ScanID); !ok {
		t.Fatal("the open high finding was not announced")
	}
	gate := func(scanID string) gateAnswer {
		var a gateAnswer
		w.get(t, w.acme.Admin, "/scan/"+scanID+"/check_blocking_rules?page=1&block_on=all").Decode(t, &a)
		return a
	}
	if a := gate(first.ScanID); a.Stats.BlockedIssues != 1 || a.BlockingIssues[0].ID == sqliID {
		t.Fatalf("the suppressed finding blocked: %+v", a)
	}
	// Listed with status=suppressed, counted under by_status.suppressed,
	// in no open count.
	var list struct {
		TotalIssues int `json:"total_issues"`
		Issues      []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
	}
	w.get(t, w.acme.Admin, "/issues?project=payments&status=suppressed").Decode(t, &list)
	if list.TotalIssues != 1 || len(list.Issues) != 1 || list.Issues[0].ID != sqliID || list.Issues[0].Status != "suppressed" {
		t.Fatalf("status=suppressed: %+v", list)
	}
	var groups struct {
		Groups []struct {
			Breakdown struct {
				ByStatus map[string]int `json:"by_status"`
			} `json:"breakdown"`
		} `json:"groups"`
	}
	w.get(t, w.acme.Admin, "/issues/groups?project=payments&group_by=cwe&breakdown=true&status=suppressed").Decode(t, &groups)
	if len(groups.Groups) != 1 || groups.Groups[0].Breakdown.ByStatus["suppressed"] != 1 || groups.Groups[0].Breakdown.ByStatus["open"] != 0 {
		t.Fatalf("groups: %+v", groups)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)

	// People cannot give the status; the code does.
	if res := testenv.Do(t, w.h, "PATCH", "/issue/"+sqliID, `{"status":"suppressed"}`, testenv.Key(w.acme.Admin)...); res.Status != 400 {
		t.Fatalf("PATCH suppressed: %d %s", res.Status, res.Body)
	}

	// The suppression goes from the SQL finding to the XSS one.
	second := w.upload(t, w.acme, "payments", "main", sarif(result("sqli", "src/db.py", 4), suppressedResult("xss", "web/a.js", 2, "")))
	if got := byPath(); got["src/db.py"] != "open|" || got["web/a.js"] != "suppressed|" {
		t.Fatalf("second scan: %v", got)
	}
	if a := gate(second.ScanID); a.Stats.BlockedIssues != 1 || a.BlockingIssues[0].ID != sqliID {
		t.Fatalf("the reopened finding must block, the suppressed one not: %+v", a)
	}
	var hist struct {
		History []struct{ From, To, Reason string } `json:"history"`
	}
	w.get(t, w.acme.Admin, "/issue/"+sqliID+"/history").Decode(t, &hist)
	if n := len(hist.History); n == 0 || hist.History[n-1].From != "suppressed" || hist.History[n-1].To != "open" || hist.History[n-1].Reason != "suppression removed" {
		t.Fatalf("history %+v", hist)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)

	// Triage outranks the code: a false positive stays one when suppressed.
	if res := testenv.Do(t, w.h, "PATCH", "/issue/"+sqliID, `{"status":"false_positive","reason":"parameterised"}`, testenv.Key(w.acme.Admin)...); res.Status != 200 {
		t.Fatalf("triage: %d %s", res.Status, res.Body)
	}
	w.upload(t, w.acme, "payments", "main", sarif(suppressedResult("sqli", "src/db.py", 4, "fixture"), suppressedResult("xss", "web/a.js", 2, "")))
	if got := byPath(); got["src/db.py"] != "false_positive|parameterised" || got["web/a.js"] != "suppressed|" {
		t.Fatalf("third scan: %v", got)
	}
	// A suppressed finding the code no longer has is fixed.
	w.upload(t, w.acme, "payments", "main", sarif(suppressedResult("sqli", "src/db.py", 4, "fixture")))
	if got := byPath(); got["web/a.js"] != "fixed|" {
		t.Fatalf("fourth scan: %v", got)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)
	if _, err := w.env.Store.Lists.GetIssue(ctx, w.other.ID, sqliID); err == nil {
		t.Fatal("another company reads the issue")
	}
}

// gosec's SARIF has no fingerprints and its snippet is the line as
// written: a real report before a `#nosec` comment was added and one after
// it give the finding one identity, which becomes suppressed (and the
// comment's removal reopens the same issue) rather than fixed and created
// anew.
func TestNosecCommentKeepsIdentity(t *testing.T) {
	w := newWorld(t)
	w.rule(t, w.acme, `{"slug":"all","name":"Everything"}`)
	report := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "..", "shared", "reports", "sarif", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	byLine := func(scanID string) map[int]findings.Issue { // G401 issues by line
		out := map[int]findings.Issue{}
		for _, i := range w.issues(t, scanID) {
			if i.RuleID == "G401" {
				out[i.Line] = i
			}
		}
		return out
	}
	before := byLine(w.upload(t, w.acme, "suppressed", "main", report("gosec-before-nosec.sarif")).ScanID)
	after := byLine(w.upload(t, w.acme, "suppressed", "main", report("gosec-nosec.sarif")).ScanID)
	if len(before) != 2 || len(after) != 2 {
		t.Fatalf("G401 issues: before %d, after %d", len(before), len(after))
	}
	if b, a := before[14], after[14]; a.ID != b.ID || b.Status != "open" || a.Status != "suppressed" || a.Reason != "cache key, not a security boundary" {
		t.Fatalf("line 14: before %s %s, after %s %s %q", b.ID, b.Status, a.ID, a.Status, a.Reason)
	}
	if b, a := before[16], after[16]; a.ID != b.ID || a.Status != "open" {
		t.Fatalf("line 16: before %s, after %s %s", b.ID, a.ID, a.Status)
	}
	again := byLine(w.upload(t, w.acme, "suppressed", "main", report("gosec-before-nosec.sarif")).ScanID)
	if i := again[14]; i.ID != before[14].ID || i.Status != "open" {
		t.Fatalf("comment removed: %s %s", i.ID, i.Status)
	}
	var hist struct {
		History []struct{ From, To, Reason string } `json:"history"`
	}
	w.get(t, w.acme.Admin, "/issue/"+before[14].ID+"/history").Decode(t, &hist)
	if n := len(hist.History); n == 0 || hist.History[n-1].From != "suppressed" || hist.History[n-1].Reason != "suppression removed" {
		t.Fatalf("history %+v", hist)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)
}
