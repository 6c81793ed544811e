package uploads_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/routes"
)

// gosecLike is a SARIF report of one tool with the given results, each
// "<rule> <cwe> <file> <line>".
func gosecLike(results ...string) []byte {
	var rs []string
	for _, r := range results {
		var rule, file string
		var cwe, line int
		fmt.Sscan(r, &rule, &cwe, &file, &line)
		rs = append(rs, fmt.Sprintf(`{"ruleId":%q,"level":"error","message":{"text":"%s in %s"},`+
			`"properties":{"tags":["security","CWE-%d"]},`+
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":%q},"region":{"startLine":%d}}}]}`, rule, rule, file, cwe, file, line))
	}
	return []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gosec"}},"results":[` + strings.Join(rs, ",") + `]}]}`)
}

func (w *world) issueJSON(t *testing.T, u testenv.User, id string) (int, map[string]any) {
	t.Helper()
	res := testenv.Do(t, w.find, "GET", "/issue/"+id, "", testenv.Key(u)...)
	if res.Status != 200 {
		return res.Status, nil
	}
	var body struct {
		Issue map[string]any `json:"issue"`
	}
	res.Decode(t, &body)
	return res.Status, body.Issue
}

func byRule(t *testing.T, list []listed) map[string]listed {
	t.Helper()
	out := map[string]listed{}
	for _, i := range list {
		out[i.RuleID] = i
	}
	return out
}

// The issue's "done when": same report twice leaves counts and ids
// unchanged; a finding left out is fixed; it comes back open with its first
// detection kept; a false positive stays one; bulk triage of a CWE group is
// exact and idempotent; the history tells who did what.
func TestLifecycleThroughTheAPI(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	triager := w.env.User(t, w.company, testenv.UserSpec{Email: "sec@acme.test", Permissions: []string{routes.PermTriageIssue}})
	viewer := w.env.User(t, w.company, testenv.UserSpec{Email: "dev@acme.test"})
	full := gosecLike("sqli 89 db/q.go 10", "sqli 89 db/r.go 20", "xss 79 web/h.go 5", "path 22 fs/o.go 7")
	const q = "engine=sarif&project=shop&branch=main&run_id="

	w.uploadOK(t, q+newRun(), full)
	first := byRule(t, w.issues(t, "project=shop"))
	groups, total := w.groups(t, "project=shop")
	w.uploadOK(t, q+newRun(), full)
	again, total2 := w.groups(t, "project=shop")
	sameCounts(t, "second upload", again, groups)
	if total != 4 || total2 != 4 || groups["CWE-89"] != 2 {
		t.Fatalf("counts after two uploads: %v (%d, %d)", again, total, total2)
	}
	for _, i := range w.issues(t, "project=shop") {
		if first[i.RuleID].ID == "" || (i.RuleID != "sqli" && first[i.RuleID].ID != i.ID) {
			t.Fatalf("issue ids changed on re-upload: %+v", i)
		}
	}
	xss := first["xss"]

	// The xss finding is left out: fixed.
	w.uploadOK(t, q+newRun(), gosecLike("sqli 89 db/q.go 10", "sqli 89 db/r.go 20", "path 22 fs/o.go 7"))
	_, got := w.issueJSON(t, viewer, xss.ID)
	if got["status"] != "fixed" || got["fixed_scan_id"] == nil {
		t.Fatalf("left-out finding: %v", got)
	}

	// A false positive stays one when re-detected.
	path := first["path"].ID
	if res := testenv.Do(t, w.find, "PATCH", "/issue/"+path, `{"status":"false_positive","reason":"test data"}`, testenv.Key(triager)...); res.Status != 200 {
		t.Fatalf("patch: %d %s", res.Status, res.Body)
	}
	if res := testenv.Do(t, w.find, "PATCH", "/issue/"+path, `{"status":"open"}`, testenv.Key(viewer)...); res.Status != 403 {
		t.Fatalf("patch without the permission: %d %s", res.Status, res.Body)
	}

	// The xss finding comes back (on another line): open, same id, first
	// detection kept, reopened once.
	w.uploadOK(t, q+newRun(), gosecLike("sqli 89 db/q.go 10", "sqli 89 db/r.go 20", "xss 79 web/h.go 9", "path 22 fs/o.go 7"))
	_, back := w.issueJSON(t, viewer, xss.ID)
	if back["status"] != "open" || back["reopen_count"] != float64(1) || back["first_detection_date"] != xss.CreatedAt ||
		back["location"].(map[string]any)["line_number"] != float64(9) {
		t.Fatalf("finding back: %v (first seen %s)", back, xss.CreatedAt)
	}
	if _, p := w.issueJSON(t, viewer, path); p["status"] != "false_positive" || p["reason"] != "test data" {
		t.Fatalf("false positive after re-detection: %v", p)
	}
	res := testenv.Do(t, w.find, "GET", "/issue/"+xss.ID+"/history", "", testenv.Key(viewer)...)
	var hist struct {
		History []struct {
			From, To string
			By       struct {
				UserID int64  `json:"user_id"`
				ScanID string `json:"scan_id"`
			}
		}
	}
	res.Decode(t, &hist)
	if len(hist.History) != 2 || hist.History[0].To != "fixed" || hist.History[1].To != "open" || hist.History[1].By.ScanID == "" {
		t.Fatalf("history: %s", res.Body)
	}

	// Bulk triage of the CWE-89 group: exact, and by_status moves by as much.
	body := `{"filters":{"project":"shop","cwe":"CWE-89"},"status":"accepted_risk","reason":"legacy"}`
	res = testenv.Do(t, w.find, "POST", "/issues/triage", body, testenv.Key(triager)...)
	var tri struct{ Matched, Changed int }
	res.Decode(t, &tri)
	if res.Status != 200 || tri.Matched != 2 || tri.Changed != 2 {
		t.Fatalf("bulk triage: %d %s", res.Status, res.Body)
	}
	if byStatus := w.byStatus(t, "project=shop", "CWE-89"); byStatus["accepted_risk"] != 2 || byStatus["open"] != 0 {
		t.Fatalf("by_status after bulk triage: %v", byStatus)
	}
	res = testenv.Do(t, w.find, "POST", "/issues/triage", body, testenv.Key(triager)...)
	res.Decode(t, &tri)
	if tri.Matched != 2 || tri.Changed != 0 {
		t.Fatalf("bulk triage again: %s", res.Body)
	}
	// The status filter of the groups.
	if g, _ := w.groups(t, "project=shop&status=accepted_risk"); len(g) != 1 || g["CWE-89"] != 2 {
		t.Fatalf("groups in accepted_risk: %v", g)
	}
	for _, bad := range []string{`{"filters":{},"status":"open"}`, `{"filters":{"cwe":"89"},"status":"closed"}`,
		`{"filters":{"colour":"red"},"status":"open"}`, `{"filters":{"cwe":"89"}}`} {
		if res := testenv.Do(t, w.find, "POST", "/issues/triage", bad, testenv.Key(triager)...); res.Status != 400 {
			t.Fatalf("triage %s: %d %s", bad, res.Status, res.Body)
		}
	}
	testenv.Recount(t, w.env.Store, w.company.ID)

	// Another company sees none of it: every id answers like a missing one.
	other := w.env.Company(t, "Other")
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/issue/" + xss.ID, ""}, {"GET", "/issue/" + xss.ID + "/history", ""},
		{"PATCH", "/issue/" + xss.ID, `{"status":"open"}`}, {"GET", "/scan/" + xss.ScanID + "/issues", ""},
	} {
		res := testenv.Do(t, w.find, r.method, r.path, r.body, testenv.Key(other.Admin)...)
		missing := testenv.Do(t, w.find, r.method, strings.Replace(r.path, xss.ID, "00000000-0000-4000-8000-000000000000", 1), r.body, testenv.Key(other.Admin)...)
		if res.Status != 404 || res.Status != missing.Status || string(res.Body) != string(missing.Body) {
			t.Fatalf("%s %s from another company: %d %s (missing: %d %s)", r.method, r.path, res.Status, res.Body, missing.Status, missing.Body)
		}
	}
	res = testenv.Do(t, w.find, "POST", "/issues/triage", body, testenv.Key(other.Admin)...)
	res.Decode(t, &tri)
	if tri.Matched != 0 {
		t.Fatalf("another company's bulk triage matched %s", res.Body)
	}
}

// byStatus is one CWE group's breakdown by status.
func (w *world) byStatus(t *testing.T, query, cwe string) map[string]int {
	t.Helper()
	res := testenv.Do(t, w.find, "GET", "/issues/groups?breakdown=true&page_size=100&"+query, "", testenv.Key(w.company.Admin)...)
	var body struct {
		Groups []struct {
			CWE       struct{ ID string } `json:"cwe"`
			Breakdown struct {
				ByStatus map[string]int `json:"by_status"`
			} `json:"breakdown"`
		} `json:"groups"`
	}
	res.Decode(t, &body)
	for _, g := range body.Groups {
		if g.CWE.ID == cwe {
			return g.Breakdown.ByStatus
		}
	}
	return nil
}

// The scan's own issue list carries every field the real client requires.
func TestScanIssuesForTheClient(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	scan := w.uploadOK(t, "engine=sarif&project=shop&branch=main&run_id="+newRun(),
		gosecLike("sqli 89 db/q.go 10", "xss 79 web/h.go 5", "xss 79 web/h.go 6"))
	res := testenv.Do(t, w.find, "GET", "/scan/"+scan.ScanID+"/issues?page=1&page_size=2", "", testenv.Key(w.company.Admin)...)
	var body struct {
		Status      string            `json:"status"`
		TotalIssues int               `json:"total_issues"`
		TotalPages  int               `json:"total_pages"`
		Issues      []json.RawMessage `json:"issues"`
	}
	res.Decode(t, &body)
	if res.Status != 200 || body.Status != "ok" || body.TotalIssues != 3 || body.TotalPages != 2 || len(body.Issues) != 2 {
		t.Fatalf("scan issues: %d %s", res.Status, res.Body)
	}
	var i struct {
		ID             *string `json:"id"`
		Status         *string `json:"status"`
		Urgency        *string `json:"urgency"`
		CreatedAt      *string `json:"created_at"`
		Classification *struct {
			ID, Name *string
		} `json:"classification"`
		Location *struct {
			File *struct {
				Name, Language, Path *string
			} `json:"file"`
			LineNumber *uint32                 `json:"line_number"`
			Project    *struct{ Name *string } `json:"project"`
		} `json:"location"`
		AutoTriage *struct {
			FalsePositiveDetection *struct{ Status *string } `json:"false_positive_detection"`
		} `json:"auto_triage"`
	}
	if err := json.Unmarshal(body.Issues[0], &i); err != nil || i.ID == nil || i.Status == nil || i.Urgency == nil || i.CreatedAt == nil ||
		i.Classification == nil || i.Classification.ID == nil || i.Location == nil || i.Location.File == nil ||
		i.Location.File.Language == nil || i.Location.LineNumber == nil || i.Location.Project == nil ||
		i.AutoTriage == nil || i.AutoTriage.FalsePositiveDetection == nil || i.AutoTriage.FalsePositiveDetection.Status == nil {
		t.Fatalf("issue lacks a field the client requires: %s (%v)", body.Issues[0], err)
	}
	if res := testenv.Do(t, w.find, "GET", "/scan/00000000-0000-4000-8000-000000000000/issues", "", testenv.Key(w.company.Admin)...); res.Status != 404 {
		t.Fatalf("unknown scan: %d %s", res.Status, res.Body)
	}
}

// A scan's issue list answers next_page_token, which opens the same page as
// its number and no other scan's list nor an edited form of itself (the
// store's TestScanMembershipChunks walks lists across chunks).
func TestScanIssuesPageByKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var results []string
	for k := range 8 {
		results = append(results, fmt.Sprintf("r%d 79 web/h%d.go %d", k, k, 1+k))
	}
	scan := w.uploadOK(t, "engine=sarif&project=shop&branch=main&run_id="+newRun(), gosecLike(results...))
	other := w.uploadOK(t, "engine=sarif&project=shop&branch=dev&run_id="+newRun(), gosecLike(results[:2]...))
	type page struct {
		Page        int
		TotalPages  int    `json:"total_pages"`
		TotalIssues int    `json:"total_issues"`
		Next        string `json:"next_page_token"`
		Issues      []struct{ ID string }
	}
	get := func(scanID, query string) (page, *testenv.Response) {
		res := testenv.Do(t, w.find, "GET", "/scan/"+scanID+"/issues?page_size=5&"+query, "", testenv.Key(w.company.Admin)...)
		var p page
		if res.Status == 200 {
			res.Decode(t, &p)
		}
		return p, res
	}
	first, _ := get(scan.ScanID, "page=1")
	second, _ := get(scan.ScanID, "page=2")
	next, _ := get(scan.ScanID, "next_page_token="+first.Next)
	if first.Next == "" || second.Next != "" || next.Next != "" || next.Page != 2 || next.TotalIssues != 8 || next.TotalPages != 2 ||
		len(next.Issues) != 3 || fmt.Sprint(next.Issues) != fmt.Sprint(second.Issues) {
		t.Fatalf("page 1 %+v\npage 2 %+v\nby token %+v", first, second, next)
	}
	for _, c := range []struct{ scan, token string }{
		{other.ScanID, first.Next},
		{scan.ScanID, "x" + first.Next},
		{scan.ScanID, first.Next[:len(first.Next)-2]},
	} {
		if _, res := get(c.scan, "next_page_token="+c.token); res.Status != 400 {
			t.Fatalf("token %q on scan %s: %d %s", c.token, c.scan, res.Status, res.Body)
		}
	}
}
