package uploads_test

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/codescan-api/functions/projects"
	"github.com/acme/codescan-api/internal/testenv"
)

// withAutomationID is a gosecLike report whose run names an automation id.
func withAutomationID(report []byte, id string) []byte {
	return []byte(strings.Replace(string(report), `"runs":[{`, `"runs":[{"automationDetails":{"id":"`+id+`"},`, 1))
}

// statuses are the issues' statuses by rule, through GET /issues.
func (w *world) statusesByRule(t *testing.T, query string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, i := range w.issues(t, query) {
		out[i.RuleID] = i.Status
	}
	return out
}

// A monorepo's two jobs upload the same tool's reports for one branch,
// each with its category (one as a query parameter, one from the SARIF
// runAutomationDetails.id): neither fixes the other's findings, through
// the API; the scan keeps its category; the counts stay exact.
func TestCategoriesThroughTheAPI(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const q = "engine=sarif&project=mono&branch=main&run_id="
	aRun := w.uploadOK(t, q+newRun()+"&category=services/a/", gosecLike("sqli 89 a/db.go 10", "xss 79 a/web.go 5"))
	if sc := w.env.WaitScan(t, w.company.ID, aRun.ScanID, 0); sc.Category != "services/a" {
		t.Fatalf("category of the scan: %q", sc.Category)
	}
	bRun := w.uploadOK(t, q+newRun(), withAutomationID(gosecLike("path 22 b/fs.go 7"), "services/b/2026-11-27"))
	if sc := w.env.WaitScan(t, w.company.ID, bRun.ScanID, 0); sc.Category != "services/b" {
		t.Fatalf("category from runAutomationDetails.id: %q", sc.Category)
	}
	// The scan's JSON shows it (validated against the OpenAPI description).
	res := testenv.Do(t, projects.New(w.env.Deps), "GET", "/scan/"+bRun.ScanID, "", testenv.Key(w.company.Admin)...)
	if body := res.JSON(t); res.Status != 200 || !strings.Contains(string(res.Body), `"category":"services/b"`) {
		t.Fatalf("GET /scan/{id}: %d %v", res.Status, body)
	}
	want := map[string]string{"sqli": "open", "xss": "open", "path": "open"}
	if got := w.statusesByRule(t, "project=mono"); !sameMap(got, want) {
		t.Fatalf("after both categories: %v", got)
	}

	// services/a without xss fixes xss only; services/b's path stays.
	aAgain := w.uploadOK(t, q+newRun()+"&category=services/a", gosecLike("sqli 89 a/db.go 10"))
	want["xss"] = "fixed"
	if got := w.statusesByRule(t, "project=mono"); !sameMap(got, want) {
		t.Fatalf("after a without xss: %v", got)
	}
	// The issue was last seen by its category's latest scan, though the
	// tool's uncategorised head names none.
	for _, i := range w.issues(t, "project=mono") {
		if i.RuleID != "sqli" {
			continue
		}
		var got struct {
			Issue struct {
				LastSeenScanID string `json:"last_seen_scan_id"`
			} `json:"issue"`
		}
		testenv.Do(t, w.find, "GET", "/issue/"+i.ID, "", testenv.Key(w.company.Admin)...).Decode(t, &got)
		if got.Issue.LastSeenScanID != aAgain.ScanID {
			t.Fatalf("last_seen_scan_id of sqli: %q, want services/a's latest scan %q", got.Issue.LastSeenScanID, aAgain.ScanID)
		}
	}
	// services/b's empty report fixes path, not a's sqli.
	w.uploadOK(t, q+newRun(), withAutomationID(gosecLike(), "services/b/2026-11-28"))
	want["path"] = "fixed"
	if got := w.statusesByRule(t, "project=mono"); !sameMap(got, want) {
		t.Fatalf("after b empty: %v", got)
	}
	// Counted once each, by status (the counters' breakdown).
	for cwe, want := range map[string]map[string]int{"CWE-89": {"open": 1}, "CWE-79": {"fixed": 1}, "CWE-22": {"fixed": 1}} {
		if got := w.byStatus(t, "project=mono", cwe); !sameCounts2(got, want) {
			t.Fatalf("%s by status: %v, want %v", cwe, got, want)
		}
	}
	testenv.Recount(t, w.env.Store, w.company.ID)
}

// An upload without a category (the real client sends none) behaves as
// before: its scan is the tool's truth on the branch.
func TestNoCategoryUploadAsBefore(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const q = "engine=sarif&project=plain&branch=main&run_id="
	first := w.uploadOK(t, q+newRun(), gosecLike("sqli 89 db.go 10", "xss 79 web.go 5"))
	if sc := w.env.WaitScan(t, w.company.ID, first.ScanID, 0); sc.Category != "" {
		t.Fatalf("category of an upload naming none: %q", sc.Category)
	}
	// An automation id without "/" is a run id only: no category.
	w.uploadOK(t, q+newRun(), withAutomationID(gosecLike("sqli 89 db.go 10"), "nightly-2026-11-27"))
	if got := w.statusesByRule(t, "project=plain"); got["sqli"] != "open" || got["xss"] != "fixed" {
		t.Fatalf("uncategorised scans: %v", got)
	}
	testenv.Recount(t, w.env.Store, w.company.ID)
}

// A category that is too long or holds characters outside the charset is
// 400 naming category, from the query or from the report; nothing is
// stored.
func TestCategoryBadInput(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const q = "engine=sarif&project=bad&branch=main&run_id="
	ok := gosecLike("sqli 89 db.go 10")
	for _, c := range []struct {
		query  string
		report []byte
	}{
		{q + newRun() + "&category=" + strings.Repeat("a", 101), ok},
		{q + newRun() + "&category=has%20space", ok},
		{q + newRun() + "&category=quote%22", ok},
		{q + newRun(), withAutomationID(ok, "bad category/run")},
		{q + newRun(), withAutomationID(ok, strings.Repeat("x", 101)+"/run")},
	} {
		res := w.upload(t, w.uploader, c.query, c.report)
		body := res.JSON(t)
		if res.Status != 400 || body["status"] != "error" || !strings.Contains(body["message"].(string), "category") {
			t.Fatalf("%s: %d %s", c.query, res.Status, res.Body)
		}
	}
	if _, err := w.env.Store.Catalog.ProjectByName(context.Background(), w.company.ID, "bad"); err == nil {
		t.Fatal("a rejected upload created its project")
	}
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// sameCounts2 compares counts, a missing count being 0.
func sameCounts2(got, want map[string]int) bool {
	for k, v := range got {
		if want[k] != v {
			return false
		}
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
