package uploads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/functions/uploads"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/reports"
	"github.com/acme/codescan-api/shared/routes"
	storescans "github.com/acme/codescan-api/shared/store/scans"
)

func TestMain(m *testing.M) { testenv.MainOwnDynamoDB(m) } // its tables have streams

// world is a company with an uploader, and both groups' handlers, on a
// table whose stream feeds the ingester (through the local stream poller,
// as in the dev server).
type world struct {
	env      *testenv.Env
	up, find http.Handler
	company  *testenv.Company
	uploader testenv.User
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := testenv.NewStreaming(t)
	env.StartIngester(t)
	w := &world{env: env, up: uploads.New(env.Deps), find: issues.New(env.Deps), company: env.Company(t, "Acme")}
	w.uploader = env.User(t, w.company, testenv.UserSpec{Email: "ci@acme.test", Permissions: []string{routes.PermUploadScan}})
	return w
}

func report(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newRun() string { return uuid.NewString() }

type scanResult struct {
	Status    string `json:"status"`
	ScanID    string `json:"sast_scan_id"`
	ProjectID int64  `json:"project_id"`
}

func (w *world) upload(t *testing.T, u testenv.User, query string, body []byte) *testenv.Response {
	t.Helper()
	return testenv.DoBytes(t, w.up, "POST", "/scan-upload?"+query, body, append(testenv.Key(u), "Content-Type", "application/json")...)
}

func (w *world) uploadOK(t *testing.T, query string, body []byte) scanResult {
	t.Helper()
	res := w.upload(t, w.uploader, query, body)
	if res.Status != 200 {
		t.Fatalf("upload %s: %d %s", query, res.Status, res.Body)
	}
	var out scanResult
	res.Decode(t, &out)
	if out.Status != "ok" || uuid.Validate(out.ScanID) != nil || out.ProjectID == 0 {
		t.Fatalf("upload answer: %s", res.Body)
	}
	w.ingested(t, w.uploader, out.ScanID)
	return out
}

// ingested waits until the ingester has completed the scan, which the
// uploader's company owns.
func (w *world) ingested(t *testing.T, u testenv.User, scanID string) {
	t.Helper()
	if sc := w.env.WaitScan(t, u.CompanyID, scanID, 2*time.Minute); sc.Status != storescans.ScanComplete {
		t.Fatalf("scan %s: %s %q %+v", scanID, sc.Status, sc.FailedReason, sc.ScanErrors)
	}
}

// groups returns issue_count per group id (CWE id or file path) over all
// pages, and the total.
func (w *world) groups(t *testing.T, query string) (map[string]int, int) {
	t.Helper()
	out := map[string]int{}
	total := 0
	for page := 1; ; page++ {
		res := testenv.Do(t, w.find, "GET", fmt.Sprintf("/issues/groups?page_size=100&page=%d&%s", page, query), "", testenv.Key(w.company.Admin)...)
		if res.Status != 200 {
			t.Fatalf("groups %s: %d %s", query, res.Status, res.Body)
		}
		var body struct {
			Status     string `json:"status"`
			TotalPages int    `json:"total_pages"`
			Groups     []struct {
				CWE        *struct{ ID string }   `json:"cwe"`
				File       *struct{ Path string } `json:"file"`
				IssueCount int                    `json:"issue_count"`
			} `json:"groups"`
		}
		res.Decode(t, &body)
		if body.Status == "no_project_found" {
			return nil, 0
		}
		for _, g := range body.Groups {
			key := ""
			if g.CWE != nil {
				key = g.CWE.ID
			} else {
				key = g.File.Path
			}
			out[key] += g.IssueCount
			total += g.IssueCount
		}
		if page >= body.TotalPages {
			return out, total
		}
	}
}

type listed struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	RuleID    string `json:"rule_id"`
	Urgency   string `json:"urgency"`
	Status    string `json:"status"`
	ScanID    string `json:"scan_id"`
	CreatedAt string `json:"created_at"`
	Location  struct {
		File       struct{ Path string } `json:"file"`
		LineNumber int                   `json:"line_number"`
		Project    struct {
			ID     int64  `json:"id"`
			Name   string `json:"name"`
			Branch string `json:"branch"`
		} `json:"project"`
	} `json:"location"`
	CWE struct{ ID string } `json:"cwe"`
}

// issues returns every issue the drill-down lists for query.
func (w *world) issues(t *testing.T, query string) []listed {
	t.Helper()
	var out []listed
	for page := 1; ; page++ {
		res := testenv.Do(t, w.find, "GET", fmt.Sprintf("/issues?page_size=100&page=%d&%s", page, query), "", testenv.Key(w.company.Admin)...)
		if res.Status != 200 {
			t.Fatalf("issues %s: %d %s", query, res.Status, res.Body)
		}
		var body struct {
			TotalPages  int      `json:"total_pages"`
			TotalIssues int      `json:"total_issues"`
			Issues      []listed `json:"issues"`
		}
		res.Decode(t, &body)
		out = append(out, body.Issues...)
		if page >= body.TotalPages {
			if len(out) != body.TotalIssues {
				t.Fatalf("issues %s: listed %d, total_issues %d", query, len(out), body.TotalIssues)
			}
			return out
		}
	}
}

func sameCounts(t *testing.T, what string, got map[string]int, want map[string]int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

// Two scanners' reports, both CWE forms, then the findings routes show the
// new issues with exact counts.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	semgrep := w.uploadOK(t, "engine=sarif&project=web-app&branch=main&ci=true&ci_platform=github&run_id="+newRun(), report(t, "semgrep.sarif"))
	// CodeQL's report names the branch and the repository itself; the
	// engine name is accepted in any case.
	codeql := w.uploadOK(t, "engine=SARIF&project=Web-App&run_id="+newRun(), report(t, "codeql.sarif"))
	gosec := w.uploadOK(t, "engine=sarif&project=api&branch=release/2.0&run_id="+newRun()+
		"&repo_url="+url.QueryEscape("https://x-access-token:ghs_abc123@GitHub.com/acme/api.git/"), report(t, "gosec.sarif"))
	if semgrep.ProjectID != codeql.ProjectID || gosec.ProjectID == semgrep.ProjectID || semgrep.ScanID == codeql.ScanID {
		t.Fatalf("projects/scans: %+v %+v %+v", semgrep, codeql, gosec)
	}

	byCWE, total := w.groups(t, "project=web-app")
	// Semgrep's debug-enabled rule has no security classification: a
	// quality finding, which this upload does not store.
	sameCounts(t, "web-app by CWE", byCWE, map[string]int{"CWE-89": 3, "CWE-79": 3, "CWE-94": 1, "CWE-770": 1})
	if total != 8 {
		t.Fatalf("web-app total %d", total)
	}
	byCWE, _ = w.groups(t, "project=api")
	sameCounts(t, "api by CWE", byCWE, map[string]int{"CWE-798": 1, "CWE-22": 1, "CWE-328": 1, "CWE-703": 1})
	byFile, _ := w.groups(t, "group_by=file_path&project=web-app&branch=main")
	sameCounts(t, "web-app files", byFile, map[string]int{
		"app/views/orders.py": 1, "app/views/search.py": 1, "app/templates/profile.html": 1,
		"src/routes/search.js": 1, "src/db/orders.js": 1, "src/routes/admin.js": 2, "src/server.js": 1,
	})
	// The repository URL of CodeQL's versionControlProvenance went to the
	// project: the repo filter matches it in any remote form.
	byCWE, total = w.groups(t, "repo="+url.QueryEscape("git@github.com:acme/web-app.git"))
	if total != 8 || byCWE["CWE-89"] != 3 {
		t.Fatalf("repo filter: %v %d", byCWE, total)
	}

	// The drill-down agrees, and shows what the reports said.
	sql := w.issues(t, "project=web-app&cwe=CWE-89")
	if len(sql) != 3 {
		t.Fatalf("CWE-89 issues: %+v", sql)
	}
	all := w.issues(t, "project=api")
	found := false
	for _, is := range all {
		if is.RuleID == "G101" {
			found = true
			if is.Location.File.Path != "internal/config/config.go" || is.Location.LineNumber != 17 || is.Urgency != "HI" ||
				is.Status != "open" || is.CWE.ID != "CWE-798" || is.ScanID != gosec.ScanID ||
				is.Location.Project.Branch != "release/2.0" || is.Title != "Potential hardcoded credentials" {
				t.Fatalf("G101 issue: %+v", is)
			}
		}
	}
	if !found || len(all) != 4 {
		t.Fatalf("api issues: %+v", all)
	}

	// The scans carry what the uploads said.
	ctx := context.Background()
	sc, err := w.env.Store.Scans.GetScan(ctx, w.company.ID, semgrep.ScanID)
	if err != nil || sc.Branch != "main" || !sc.CI || sc.CIPlatform != "github" || sc.Engine != "sarif" || sc.ReportSHA256 == "" {
		t.Fatalf("semgrep scan: %+v %v", sc, err)
	}
	sc, err = w.env.Store.Scans.GetScan(ctx, w.company.ID, codeql.ScanID)
	if err != nil || sc.Branch != "main" || sc.RepoURL != "https://github.com/acme/web-app" || sc.CI {
		t.Fatalf("codeql scan: %+v %v", sc, err)
	}
	// A repo_url with credentials is stored without them.
	sc, err = w.env.Store.Scans.GetScan(ctx, w.company.ID, gosec.ScanID)
	p, perr := w.env.Store.Catalog.GetProject(ctx, w.company.ID, gosec.ProjectID)
	if err != nil || perr != nil || sc.RepoURL != "https://github.com/acme/api" || p.RepoURL != sc.RepoURL {
		t.Fatalf("gosec scan and project: %+v %+v %v %v", sc, p, err, perr)
	}
}

// A retried upload (same run, same report) creates nothing new, also after
// a first attempt that stopped half-way; a different report or project for
// a used run id is 409 and changes nothing.
func TestRetries(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	run := newRun()
	q := "engine=sarif&project=web&branch=main&run_id=" + run
	first := w.uploadOK(t, q, report(t, "codeql.sarif"))
	want := map[string]int{"CWE-79": 2, "CWE-89": 1, "CWE-94": 1, "CWE-770": 1}
	check := func(when string) {
		t.Helper()
		got, total := w.groups(t, "project=web")
		sameCounts(t, when, got, want)
		if n := len(w.issues(t, "project=web")); n != total || total != 5 {
			t.Fatalf("%s: %d listed, %d counted", when, n, total)
		}
	}
	check("first upload")

	again := w.uploadOK(t, q, report(t, "codeql.sarif"))
	if again != first {
		t.Fatalf("retry answered %+v, first %+v", again, first)
	}
	check("retry")

	// A first attempt interrupted half-way is the ingester's to finish:
	// the stream delivers the scan again (TestWorkerRedelivery).

	for name, c := range map[string]struct{ query, file string }{
		"other report":  {q, "semgrep.sarif"},
		"other project": {"engine=sarif&project=other&run_id=" + run, "codeql.sarif"},
	} {
		res := w.upload(t, w.uploader, c.query, report(t, c.file))
		if body := res.JSON(t); res.Status != 409 || body["status"] != "error" || !strings.Contains(body["message"].(string), run) {
			t.Fatalf("%s: %d %s", name, res.Status, res.Body)
		}
	}
	check("after conflicts")
	if ps, err := w.env.Store.Catalog.AllProjects(context.Background(), w.company.ID); err != nil || len(ps) != 1 {
		t.Fatalf("projects: %+v %v", ps, err)
	}

	// Another company's upload with the same run id is its own scan run;
	// this company's findings do not move.
	other := w.env.Company(t, "Other")
	res := w.upload(t, other.Admin, q, report(t, "semgrep.sarif"))
	var theirs scanResult
	res.Decode(t, &theirs)
	if res.Status != 200 || theirs.ScanID == first.ScanID {
		t.Fatalf("other company, same run id: %d %s", res.Status, res.Body)
	}
	w.ingested(t, other.Admin, theirs.ScanID)
	check("after the other company's upload")
}

// Concurrent attempts of one run (a client retrying while the first is
// still running) and concurrent first uploads to one new project end with
// one scan, one project and exact counts.
func TestConcurrentUploads(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	run := newRun()
	body := report(t, "gosec.sarif")
	queries := []string{}
	for i := 0; i < 4; i++ {
		queries = append(queries, "engine=sarif&project=svc&branch=main&run_id="+run)
	}
	for i := 0; i < 3; i++ {
		queries = append(queries, "engine=sarif&project=svc&branch=dev&run_id="+newRun())
	}
	type answer struct {
		code int
		body string
	}
	answers := make([]answer, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("POST", testenv.Host+routes.BasePath+"/scan-upload?"+q, bytes.NewReader(body))
			req.Header.Set("SERVICE-TOKEN", w.uploader.APIKey)
			rec := httptest.NewRecorder()
			w.up.ServeHTTP(rec, req)
			answers[i] = answer{rec.Code, rec.Body.String()}
		}()
	}
	wg.Wait()
	scans := map[string]bool{}
	for i, a := range answers {
		if a.code != 200 {
			t.Fatalf("upload %d: %d %s", i, a.code, a.body)
		}
		if i < 4 {
			scans[a.body] = true
		}
		var out scanResult
		if err := json.Unmarshal([]byte(a.body), &out); err != nil {
			t.Fatal(err)
		}
		w.ingested(t, w.uploader, out.ScanID)
	}
	if len(scans) != 1 {
		t.Fatalf("one run answered differently: %v", scans)
	}
	if ps, err := w.env.Store.Catalog.AllProjects(context.Background(), w.company.ID); err != nil || len(ps) != 1 {
		t.Fatalf("projects: %+v %v", ps, err)
	}
	// One report on two branches: each finding is one issue per branch,
	// however many uploads reported it.
	got, total := w.groups(t, "project=svc")
	sameCounts(t, "svc", got, map[string]int{"CWE-798": 2, "CWE-22": 2, "CWE-328": 2, "CWE-703": 2})
	if n := len(w.issues(t, "project=svc")); n != 8 || total != 8 {
		t.Fatalf("listed %d, counted %d", n, total)
	}
}

// manyResults is a valid SARIF log with n results.
func manyResults(n int) []byte { return manyRuns(1, n) }

// manyRuns is a valid SARIF log of runs runs with n results each.
func manyRuns(runs, n int) []byte {
	var b strings.Builder
	b.WriteString(`{"version":"2.1.0","runs":[`)
	for r := 0; r < runs; r++ {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"tool":{"driver":{"name":"t"}},"results":[`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"ruleId":"r","message":{"text":"x"},"properties":{"tags":["security"]}}`)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func TestScanUploadErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ok := report(t, "semgrep.sarif")
	engines := strings.Join(reports.Engines(), ", ")
	run := "engine=sarif&project=p&run_id=" + newRun()
	tooBig := append([]byte(`{"version":"2.1.0","runs":[],"pad":"`), bytes.Repeat([]byte("a"), 10<<20)...)
	cases := []struct {
		name, query string
		body        []byte
		status      int
		message     string
	}{
		{"unsupported engine", "engine=fortify&project=p&run_id=" + newRun(), ok, 400, `Unsupported engine "fortify" (supported engines: ` + engines + ")"},
		{"missing engine", "project=p&run_id=" + newRun(), ok, 400, "Missing engine (supported engines: " + engines + ")"},
		{"missing run_id", "engine=sarif&project=p", ok, 400, "Missing run_id"},
		{"malformed run_id", "engine=sarif&project=p&run_id=run-1", ok, 400, "run_id must be a UUID"},
		{"missing project", "engine=sarif&project=%20&run_id=" + newRun(), ok, 400, "Missing project"},
		{"long project", "engine=sarif&project=" + strings.Repeat("p", 256) + "&run_id=" + newRun(), ok, 400, "project is longer than 255 characters"},
		{"bad ci", run + "&ci=maybe", ok, 400, "ci must be true or false"},
		{"not JSON", run, []byte("<html>hello</html>"), 400, "Invalid SARIF report: not valid JSON (invalid character '<' looking for beginning of value at byte 1)"},
		{"empty", run, nil, 400, "Invalid SARIF report: the body is empty"},
		{"no version", run, []byte(`{"runs":[]}`), 400, `Invalid SARIF report: missing "version" (expected "2.1.0")`},
		{"old version", run, []byte(`{"version":"1.0.0","runs":[]}`), 400, `Invalid SARIF report: unsupported version "1.0.0" (only 2.1.0 is supported)`},
		{"no runs", run, []byte(`{"version":"2.1.0"}`), 400, `Invalid SARIF report: missing "runs"`},
		{"Semgrep JSON", run, []byte(`{"results":[],"errors":[],"version":"1.85.0"}`), 400, `Invalid SARIF report: unsupported version "1.85.0" (only 2.1.0 is supported)`},
		{"wrong type", run, []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":{}}]}`), 400, `Invalid SARIF report: "runs.results" has the wrong type (a JSON object)`},
		{"no driver", run, []byte(`{"version":"2.1.0","runs":[{"results":[]}]}`), 400, "Invalid SARIF report: runs[0].tool.driver.name is missing"},
		{"too large", run, tooBig, 413, "The request body exceeds the upload limit of 10 MiB as sent (64 MiB decompressed); send a larger report gzip-compressed or in chunks (Upload-Offset, Upload-Length)"},
		{"too many results", run, manyRuns(2, uploads.MaxFindings/2+1), 413, fmt.Sprintf("The report has %d results; at most %d are accepted per upload", uploads.MaxFindings+2, uploads.MaxFindings)},
		{"too many results in a run", run, manyResults(uploads.MaxFindings + 1), 413, "The report has more than 25000 results in a run"},
		{"too many runs", run, manyRuns(21, 1), 413, "The report has more than 20 runs"},
	}
	for _, c := range cases {
		res := w.upload(t, w.uploader, c.query, c.body)
		want := fmt.Sprintf(`{"message":%q,"status":"error"}`, c.message)
		if res.Status != c.status || !jsonEqual(t, res.Body, want) {
			t.Errorf("%s: %d %s, want %d %s", c.name, res.Status, res.Body, c.status, want)
		}
	}
	// Nothing was stored by any of them.
	if ps, err := w.env.Store.Catalog.AllProjects(context.Background(), w.company.ID); err != nil || len(ps) != 0 {
		t.Fatalf("projects after rejected uploads: %+v %v", ps, err)
	}

	// The permission is needed; a user without it gets the access rule's
	// 403, in the upload routes' form as every error of theirs.
	member := w.env.User(t, w.company, testenv.UserSpec{Email: "dev@acme.test"})
	if res := w.upload(t, member, run, ok); res.Status != 403 || !jsonEqual(t, res.Body, `{"message":"Permission denied","status":"error"}`) {
		t.Fatalf("no permission: %d %s", res.Status, res.Body)
	}
	// A report of exactly the limits is accepted (on a table without the
	// worker: ingesting 25,000 results is make bench's).
	q := quietWorld(t)
	if res := q.upload(t, q.uploader, run, manyResults(uploads.MaxFindings)); res.Status != 200 {
		t.Fatalf("report at the limit: %d %s", res.Status, res.Body)
	}
}

// jsonEqual compares a body with the expected JSON, member order aside.
func jsonEqual(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		return false
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(a, b)
}
