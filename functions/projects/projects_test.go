package projects_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/projects"
	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// world is two companies behind every group's handlers, as the dev server
// mounts them.
type world struct {
	env         *testenv.Env
	h           http.Handler
	acme, other *testenv.Company
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := testenv.New(t)
	w := &world{env: env, acme: env.Company(t, "Acme"), other: env.Company(t, "Other")}
	w.h = registry.Mux(env.Deps)
	return w
}

func (w *world) get(t *testing.T, u testenv.User, path string) *testenv.Response {
	t.Helper()
	return testenv.Do(t, w.h, "GET", path, "", testenv.Key(u)...)
}

const sarifTemplate = `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"Semgrep OSS","rules":[` +
	`{"id":"sqli","shortDescription":{"text":"Raw SQL"},"properties":{"security-severity":"9.1","tags":["CWE-89"]}},` +
	`{"id":"xss","shortDescription":{"text":"Reflected <b>XSS</b>"},"properties":{"security-severity":"7.5","tags":["external/cwe/cwe-79"]}},` +
	`{"id":"weak","shortDescription":{"text":"Weak hash"},"defaultConfiguration":{"level":"note"}}]}},` +
	`"results":[%s]}]}`

func result(rule, path string, line int) string {
	return fmt.Sprintf(`{"ruleId":%q,"message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":%q},"region":{"startLine":%d}}}]}`, rule, path, line)
}

func sarif(results ...string) string { return fmt.Sprintf(sarifTemplate, strings.Join(results, ",")) }

type uploaded struct {
	ScanID    string `json:"sast_scan_id"`
	ProjectID int64  `json:"project_id"`
}

func (w *world) upload(t *testing.T, c *testenv.Company, project, branch, body string) uploaded {
	t.Helper()
	q := url.Values{"engine": {"sarif"}, "run_id": {uuid.NewString()}, "project": {project}, "branch": {branch},
		"repo_url": {"https://github.com/Acme-Corp/" + project}}
	res := testenv.Do(t, w.h, "POST", "/scan-upload?"+q.Encode(), body, testenv.Key(c.Admin)...)
	if res.Status != 200 {
		t.Fatalf("upload: %d %s", res.Status, res.Body)
	}
	var out uploaded
	res.Decode(t, &out)
	w.env.Ingest(t, c.ID, out.ScanID)
	return out
}

func TestVerify(t *testing.T) {
	w := newWorld(t)
	res := w.get(t, w.acme.Admin, "/verify")
	if res.Status != 200 || strings.TrimSpace(string(res.Body)) != `{"status":"ok"}` {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	var flat map[string]string // what the client parses
	if err := json.Unmarshal(res.Body, &flat); err != nil {
		t.Fatal(err)
	}
	res = w.get(t, w.acme.Admin, "/verify?user_info=true")
	var info struct {
		Status string
		User   struct {
			ID      int64
			Email   string
			Name    string
			Company struct {
				ID   int64
				Name string
			}
		}
	}
	res.Decode(t, &info)
	if info.User.ID != w.acme.Admin.ID || info.User.Email != "admin@acme.test" || info.User.Name != "admin Tester" ||
		info.User.Company.ID != w.acme.ID || info.User.Company.Name != "Acme" {
		t.Fatalf("%s", res.Body)
	}
	if res := testenv.Do(t, w.h, "GET", "/verify", ""); res.Status != 401 {
		t.Fatalf("no credential: %d", res.Status)
	}
}

// The IDE's legacy route authenticates with the key in its path, and the
// key never reaches a log line.
func TestVerifyLegacyKeepsTheKeyOutOfLogs(t *testing.T) {
	w := newWorld(t)
	key := w.acme.Admin.APIKey
	res := testenv.Do(t, w.h, "GET", "/verify/"+key+"?url=https%3A%2F%2Fapi.example.com", "")
	if res.Status != 200 || strings.TrimSpace(string(res.Body)) != `{"status":"ok"}` {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	inactive := w.env.User(t, w.acme, testenv.UserSpec{Email: "gone@acme.test", Inactive: true})
	for _, bad := range []string{"csk_unknown", "not-a-key", inactive.APIKey} {
		if res := testenv.Do(t, w.h, "GET", "/verify/"+bad, ""); res.Status != 401 {
			t.Errorf("%s: %d %s", bad, res.Status, res.Body)
		}
	}
	logs := w.env.Logs.String()
	for _, secret := range []string{key, inactive.APIKey, "csk_unknown"} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a key reached the logs: %s", logs)
		}
	}
	if !strings.Contains(logs, `"path":"/api/v1/verify/[redacted]"`) {
		t.Fatalf("logs: %s", logs)
	}
}

type projectList struct {
	Status   string
	Projects []struct {
		ID            int64
		Name          string
		RepoURL       *string `json:"repo_url"`
		DefaultBranch *string `json:"default_branch"`
	}
	Page          int
	TotalPages    int    `json:"total_pages"`
	TotalProjects int    `json:"total_projects"`
	NextPageToken string `json:"next_page_token"`
}

func TestProjects(t *testing.T) {
	w := newWorld(t)
	pay := w.upload(t, w.acme, "payments", "release", sarif(result("sqli", "a.py", 1)))
	w.upload(t, w.acme, "payroll", "main", sarif())
	w.upload(t, w.other, "payments", "main", sarif())

	var l projectList
	w.get(t, w.acme.Admin, "/projects?repo_url=acme-corp/payments&page=1&page_size=50").Decode(t, fresh(&l))
	if len(l.Projects) != 1 || l.Projects[0].ID != pay.ProjectID || *l.Projects[0].RepoURL != "https://github.com/Acme-Corp/payments" ||
		*l.Projects[0].DefaultBranch != "release" || l.TotalPages != 1 {
		t.Fatalf("%+v", l)
	}
	w.get(t, w.acme.Admin, "/projects?page_size=1").Decode(t, fresh(&l))
	if len(l.Projects) != 1 || l.TotalProjects != 2 || l.TotalPages != 2 || l.NextPageToken == "" {
		t.Fatalf("%+v", l)
	}
	first := l.Projects[0].Name
	// The cursor is taken as next_page_token or, as before, page_token.
	w.get(t, w.acme.Admin, "/projects?page_size=1&next_page_token="+l.NextPageToken).Decode(t, fresh(&l))
	if len(l.Projects) != 1 || l.Projects[0].Name == first || l.NextPageToken != "" || l.Page != 2 {
		t.Fatalf("second page %+v", l) // a page reached by token answers its number
	}
	// A token is bound to its company.
	var own projectList
	w.get(t, w.acme.Admin, "/projects?page_size=1").Decode(t, &own)
	for _, tok := range []string{own.NextPageToken, "garbage", own.NextPageToken[:len(own.NextPageToken)-2]} {
		if res := w.get(t, w.other.Admin, "/projects?page_size=1&page_token="+tok); res.Status != 400 {
			t.Errorf("foreign or tampered token: %d %s", res.Status, res.Body)
		}
	}

	res := testenv.Do(t, w.h, "PATCH", fmt.Sprintf("/projects/%d", pay.ProjectID), `{"default_branch":" main "}`, testenv.Key(w.acme.Admin)...)
	if res.Status != 200 || !strings.Contains(string(res.Body), `"default_branch":"main"`) {
		t.Fatalf("patch: %d %s", res.Status, res.Body)
	}
	missing := testenv.Do(t, w.h, "PATCH", "/projects/999999", `{"default_branch":"main"}`, testenv.Key(w.acme.Admin)...)
	foreign := testenv.Do(t, w.h, "PATCH", fmt.Sprintf("/projects/%d", pay.ProjectID), `{"default_branch":"x"}`, testenv.Key(w.other.Admin)...)
	if missing.Status != 404 || foreign.Status != 404 || string(missing.Body) != string(foreign.Body) {
		t.Fatalf("missing %d %s, foreign %d %s", missing.Status, missing.Body, foreign.Status, foreign.Body)
	}
	for _, body := range []string{`{}`, `{"default_branch":""}`, `{"default_branch":1}`, `{"x":1}`, `[]`} {
		if res := testenv.Do(t, w.h, "PATCH", fmt.Sprintf("/projects/%d", pay.ProjectID), body, testenv.Key(w.acme.Admin)...); res.Status != 400 {
			t.Errorf("%s: %d", body, res.Status)
		}
	}
	p, _ := w.env.Store.Catalog.GetProject(context.Background(), w.acme.ID, pay.ProjectID)
	if p.DefaultBranch != "main" {
		t.Fatalf("stored %q", p.DefaultBranch)
	}
}

// GET /projects?repo_url= pages by token and by number: the filter is
// the store query's, so a page of two among 130 projects, its matches 60
// apart, fills across query pages; the total counts the matches.
func TestProjectsByRepoPages(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	var want []string
	for n := range 130 {
		p := schema.Project{CompanyID: w.acme.ID, Name: fmt.Sprintf("p%03d", n), RepoURL: fmt.Sprintf("https://github.com/acme-corp/other-%d", n)}
		if n%60 == 0 || n == 129 {
			p.RepoURL = fmt.Sprintf("https://github.com/Acme-Corp/Payments-%d", n)
			want = append(want, p.Name)
		}
		if _, err := w.env.Store.Catalog.CreateProject(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	var l projectList
	var got []string
	for path, pages := "/projects?repo_url=acme-corp/payments&page_size=2", 0; ; pages++ {
		w.get(t, w.acme.Admin, path).Decode(t, fresh(&l))
		if l.TotalProjects != 4 || l.TotalPages != 2 || l.Page != pages+1 {
			t.Fatalf("page %d: %+v", pages+1, l)
		}
		for _, p := range l.Projects {
			got = append(got, p.Name)
		}
		if l.NextPageToken == "" {
			break
		}
		path = "/projects?repo_url=acme-corp/payments&page_size=2&next_page_token=" + url.QueryEscape(l.NextPageToken)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("by token %v, want %v", got, want)
	}
	w.get(t, w.acme.Admin, "/projects?repo_url=ACME-CORP/PAYMENTS&page=2&page_size=2").Decode(t, fresh(&l))
	if len(l.Projects) != 2 || l.Projects[0].Name != want[2] || l.NextPageToken != "" || l.TotalProjects != 4 {
		t.Fatalf("page 2 by number: %+v", l)
	}
	// The token is the filter's: with another repo_url, or none, it is 400.
	w.get(t, w.acme.Admin, "/projects?repo_url=acme-corp/payments&page_size=2").Decode(t, fresh(&l))
	for _, q := range []string{"repo_url=acme-corp/other&", ""} {
		if res := w.get(t, w.acme.Admin, "/projects?"+q+"page_size=2&next_page_token="+url.QueryEscape(l.NextPageToken)); res.Status != 400 {
			t.Errorf("%q: %d %s", q, res.Status, res.Body)
		}
	}
}

type scanJSON struct {
	ID           string            `json:"id"`
	Project      string            `json:"project"`
	Status       string            `json:"status"`
	Engine       string            `json:"engine"`
	CreatedAt    string            `json:"created_at"`
	Branch       *string           `json:"branch"`
	Repo         *string           `json:"repo"`
	FailedReason *string           `json:"failed_reason"`
	ScanErrors   []scans.ScanError `json:"scan_errors"`
}

type scanList struct {
	Status        string
	Scans         []scanJSON
	Page          int
	TotalPages    int    `json:"total_pages"`
	TotalScans    *int   `json:"total_scans"`
	NextPageToken string `json:"next_page_token"`
}

func TestScans(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	var ids []string
	for n := range 3 {
		branch := []string{"main", "dev", "main"}[n]
		up := w.upload(t, w.acme, "payments", branch, sarif(result("sqli", "a.py", n+1)))
		ids = append(ids, up.ScanID)
	}
	var l scanList
	w.get(t, w.acme.Admin, "/scans?project=PAYMENTS&page=1&page_size=30").Decode(t, fresh(&l))
	if len(l.Scans) != 3 || *l.TotalScans != 3 || l.TotalPages != 1 {
		t.Fatalf("%+v", l)
	}
	for i := 1; i < len(l.Scans); i++ {
		a, b := l.Scans[i-1], l.Scans[i]
		if a.CreatedAt < b.CreatedAt || (a.CreatedAt == b.CreatedAt && a.ID > b.ID) {
			t.Fatalf("not newest first: %+v", l.Scans)
		}
	}
	s := l.Scans[0]
	if s.Project != "payments" || s.Status != "complete" || s.Engine != "sarif" || *s.Repo != "https://github.com/Acme-Corp/payments" {
		t.Fatalf("%+v", s)
	}
	w.get(t, w.acme.Admin, "/scans?project=payments&branch=main").Decode(t, fresh(&l))
	if len(l.Scans) != 2 || *l.TotalScans != 2 {
		t.Fatalf("branch: %+v", l)
	}
	w.get(t, w.acme.Admin, "/scans?page_size=2").Decode(t, fresh(&l))
	if len(l.Scans) != 2 || *l.TotalScans != 3 || l.NextPageToken == "" {
		t.Fatalf("company: %+v", l)
	}
	seen := []string{l.Scans[0].ID, l.Scans[1].ID}
	w.get(t, w.acme.Admin, "/scans?page_size=2&next_page_token="+url.QueryEscape(l.NextPageToken)).Decode(t, fresh(&l))
	if len(l.Scans) != 1 || slices.Contains(seen, l.Scans[0].ID) || l.NextPageToken != "" {
		t.Fatalf("company page 2: %+v", l)
	}
	// sha and status filter; a processing scan is listed as such.
	sc, err := w.env.Store.Scans.CreateScan(ctx, scans.Scan{CompanyID: w.acme.ID, ProjectID: mustProject(t, w, "payments"), Branch: "main",
		Engine: "sarif", Status: scans.ScanProcessing, GitSHA: "abc123"})
	if err != nil {
		t.Fatal(err)
	}
	w.get(t, w.acme.Admin, "/scans?project=payments&sha=abc123").Decode(t, fresh(&l))
	if len(l.Scans) != 1 || l.Scans[0].ID != sc.ID || l.Scans[0].Status != "processing" || l.TotalScans != nil || l.TotalPages != 1 {
		t.Fatalf("sha: %+v", l)
	}
	w.get(t, w.acme.Admin, "/scans?project=payments&status=complete&page_size=2").Decode(t, fresh(&l))
	if len(l.Scans) != 2 || l.TotalPages != 2 || l.Scans[0].Status != "complete" {
		t.Fatalf("status: %+v", l)
	}
	for _, q := range []string{"project=nope", "project=payments&status=weird", "branch=main", "project=payments&page_token=zz"} {
		if res := w.get(t, w.acme.Admin, "/scans?"+q); res.Status != 400 && res.Status != 404 {
			t.Errorf("%s: %d %s", q, res.Status, res.Body)
		}
	}
	// Another company sees none of it, and its scan ids answer like missing ones.
	w.get(t, w.other.Admin, "/scans").Decode(t, fresh(&l))
	if len(l.Scans) != 0 {
		t.Fatalf("other company lists %+v", l)
	}
	if res := w.get(t, w.other.Admin, "/scans?project=payments"); res.Status != 404 {
		t.Fatalf("%d", res.Status)
	}
	own := w.get(t, w.acme.Admin, "/scan/"+ids[0])
	var one scanJSON
	own.Decode(t, &one)
	if one.ID != ids[0] || one.Project != "payments" || one.Status != "complete" || one.ScanErrors == nil {
		t.Fatalf("%s", own.Body)
	}
	foreign := w.get(t, w.other.Admin, "/scan/"+ids[0])
	missing := w.get(t, w.other.Admin, "/scan/"+uuid.NewString())
	junk := w.get(t, w.other.Admin, "/scan/not-a-uuid")
	if foreign.Status != 404 || string(foreign.Body) != string(missing.Body) {
		t.Fatalf("foreign %d %s / missing %s", foreign.Status, foreign.Body, missing.Body)
	}
	if junk.Status != 400 || !strings.Contains(string(junk.Body), "scan_id must be a UUID") {
		t.Fatalf("not a uuid: %d %s", junk.Status, junk.Body)
	}
	// A failed scan shows its reason and errors.
	failed, _ := w.env.Store.Scans.CreateScan(ctx, scans.Scan{CompanyID: w.acme.ID, ProjectID: mustProject(t, w, "payments"), Branch: "main",
		Engine: "sarif", Status: scans.ScanIncomplete, FailedReason: "report unreadable",
		ScanErrors: []scans.ScanError{{ScanType: "sast", Level: "error", Message: "bad json"}}})
	w.get(t, w.acme.Admin, "/scan/"+failed.ID).Decode(t, fresh(&one))
	if one.Status != "incomplete" || *one.FailedReason != "report unreadable" || len(one.ScanErrors) != 1 {
		t.Fatalf("%+v", one)
	}
}

func mustProject(t *testing.T, w *world, name string) int64 {
	t.Helper()
	p, err := w.env.Store.Catalog.ProjectByName(context.Background(), w.acme.ID, name)
	if err != nil {
		t.Fatal(err)
	}
	return p.ID
}

// The SARIF report, uploaded again for the same branch, gives the same
// issues: same ids (identity), CWE, file, line and urgency.
func TestSARIFReportRoundTrip(t *testing.T) {
	w := newWorld(t)
	body := sarif(result("sqli", "app/db.py", 10), result("sqli", "app/db.py", 10), result("xss", "web/a.js", 3), result("weak", "lib/h.py", 7))
	first := w.upload(t, w.acme, "payments", "main", body)
	res := testenv.DoText(t, w.h, "GET", "/scan/"+first.ScanID+"/report?format=sarif", testenv.Key(w.acme.Admin)...)
	if res.Status != 200 || res.Header.Get("Content-Type") != "application/sarif+json" {
		t.Fatalf("%d %s", res.Status, res.Header)
	}
	second := w.upload(t, w.acme, "payments", "main", string(res.Body))
	a, b := w.issues(t, first.ScanID), w.issues(t, second.ScanID)
	if len(a) != 3 || len(a) != len(b) { // the unclassified "weak" result is a quality finding
		t.Fatalf("%d vs %d issues", len(a), len(b))
	}
	for n := range a {
		x, y := a[n], b[n]
		if x.ID != y.ID || x.CWE != y.CWE || x.FilePath != y.FilePath || x.Line != y.Line || x.Urgency != y.Urgency || x.Status != "open" || y.Status != "open" {
			t.Errorf("issue %d: %+v\nvs %+v", n, x, y)
		}
	}
	for format, ct := range map[string]string{"": "text/html; charset=utf-8", "html": "text/html; charset=utf-8", "markdown": "text/markdown; charset=utf-8"} {
		res := testenv.DoText(t, w.h, "GET", "/scan/"+first.ScanID+"/report?format="+format, testenv.Key(w.acme.Admin)...)
		if res.Status != 200 || res.Header.Get("Content-Type") != ct || !strings.Contains(string(res.Body), "CWE-89") {
			t.Errorf("%q: %d %s", format, res.Status, res.Header)
		}
		if strings.Contains(string(res.Body), "<b>XSS") {
			t.Errorf("%q: unescaped", format)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%q: X-Content-Type-Options %q", format, res.Header.Get("X-Content-Type-Options"))
		}
		// The HTML page's policy is a header too, at least as strict as
		// its <meta> tag.
		csp := res.Header.Get("Content-Security-Policy")
		if html := strings.HasPrefix(ct, "text/html"); html != (csp == projects.ReportCSP) {
			t.Errorf("%q: Content-Security-Policy %q", format, csp)
		}
		if m := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(string(res.Body)); m != nil && !strings.HasPrefix(csp, m[1]) {
			t.Errorf("%q: the header %q does not hold the page's policy %q", format, csp, m[1])
		}
	}
	js := w.get(t, w.acme.Admin, "/scan/"+first.ScanID+"/report?format=json")
	if js.Status != 200 || !strings.Contains(string(js.Body), `"fingerprint"`) {
		t.Fatalf("%d %s", js.Status, js.Body)
	}
	if res := w.get(t, w.acme.Admin, "/scan/"+first.ScanID+"/report?format=pdf"); res.Status != 400 {
		t.Fatalf("pdf: %d", res.Status)
	}
	foreign := w.get(t, w.other.Admin, "/scan/"+first.ScanID+"/report?format=json")
	missing := w.get(t, w.other.Admin, "/scan/"+uuid.NewString()+"/report?format=json")
	if foreign.Status != 404 || string(foreign.Body) != string(missing.Body) {
		t.Fatalf("foreign %d %s", foreign.Status, foreign.Body)
	}
}

func (w *world) issues(t *testing.T, scanID string) []findings.Issue {
	t.Helper()
	var out []findings.Issue
	err := w.env.Store.Lists.EachScanIssue(context.Background(), w.acme.ID, scanID, func(i findings.Issue) error {
		out = append(out, i)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b findings.Issue) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// fresh zeroes *v before a decode, so members a response leaves out do
// not keep an earlier response's values.
func fresh[T any](v *T) *T {
	var zero T
	*v = zero
	return v
}

func jsonEq(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(a, b)
}

// A default branch follows cleantext's Line rule: visible spaces around it
// are trimmed, but a control or bidi character anywhere, at an end too, is
// refused with the error body naming the member ("main\r", a CRLF line's
// tail, is not trimmed into "main"), and a refused value changes nothing.
func TestDefaultBranchRefusesControlCharacters(t *testing.T) {
	w := newWorld(t)
	p, err := w.env.Store.Catalog.CreateProject(context.Background(), schema.Project{CompanyID: w.acme.ID, Name: "payments"})
	if err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/projects/%d", p.ID)
	patch := func(branch string) *testenv.Response {
		body, err := json.Marshal(map[string]string{"default_branch": branch})
		if err != nil {
			t.Fatal(err)
		}
		return testenv.Do(t, w.h, "PATCH", path, string(body), testenv.Key(w.acme.Admin)...)
	}
	if res := patch("\u00a0release "); res.Status != 200 || !strings.Contains(string(res.Body), `"default_branch":"release"`) {
		t.Fatalf("spaces around: %d %s", res.Status, res.Body)
	}
	res := patch("main\r")
	if body := res.JSON(t); res.Status != 400 || len(body) != 1 || body["error"] != "default_branch must not contain control characters (U+000D)" {
		t.Fatalf("main\\r: %d %s", res.Status, res.Body)
	}
	for _, v := range []string{"main\r\n", "\tmain", "main\n", "main\u0085", "ma\u0000in", "\u202emain", "main\u2066"} {
		res := patch(v)
		if body := res.JSON(t); res.Status != 400 || len(body) != 1 || !strings.HasPrefix(fmt.Sprint(body["error"]), "default_branch must not contain") {
			t.Errorf("%q: %d %s", v, res.Status, res.Body)
		}
	}
	if got, err := w.env.Store.Catalog.GetProject(context.Background(), w.acme.ID, p.ID); err != nil || got.DefaultBranch != "release" {
		t.Fatalf("stored %q (%v), want release", got.DefaultBranch, err)
	}
}
