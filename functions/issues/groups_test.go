package issues_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

type groupJSON struct {
	CWE *struct {
		ID, Name, Description string
	} `json:"cwe"`
	File *struct {
		Path, Name string
	} `json:"file"`
	IssueCount int64 `json:"issue_count"`
	Breakdown  *struct {
		ByUrgency map[string]int64 `json:"by_urgency"`
		ByStatus  map[string]int64 `json:"by_status"`
	} `json:"breakdown"`
}

type groupsPage struct {
	Status      string      `json:"status"`
	Page        int         `json:"page"`
	TotalPages  int         `json:"total_pages"`
	TotalGroups int64       `json:"total_groups"`
	Groups      []groupJSON `json:"groups"`
}

type issueJSON struct {
	ID       string              `json:"id"`
	CWE      struct{ ID string } `json:"cwe"`
	Urgency  string              `json:"urgency"`
	Status   string              `json:"status"`
	Location struct {
		File    struct{ Path string } `json:"file"`
		Project struct {
			ID     int64  `json:"id"`
			Branch string `json:"branch"`
		} `json:"project"`
	} `json:"location"`
}

type issuesPage struct {
	Status      string      `json:"status"`
	Page        int         `json:"page"`
	TotalPages  int         `json:"total_pages"`
	TotalIssues int64       `json:"total_issues"`
	Issues      []issueJSON `json:"issues"`
}

// cweKey is the group key shown for a stored CWE number.
func cweKey(n int) string {
	if n == findings.NoCWE {
		return "unknown"
	}
	return "CWE-" + strconv.Itoa(n)
}

func cweNum(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "CWE-"))
	return n // "unknown" -> 0
}

func (g groupJSON) key() string {
	if g.CWE != nil {
		return g.CWE.ID
	}
	return g.File.Path
}

// allGroups walks every page of GET /issues/groups and checks the paging
// fields and the total order on the way.
func (w *world) allGroups(t *testing.T, q url.Values, size int) []groupJSON {
	t.Helper()
	var out []groupJSON
	for page := 1; ; page++ {
		var body groupsPage
		res := w.get(t, "/issues/groups", clone(q, "page", strconv.Itoa(page), "page_size", strconv.Itoa(size)))
		if res.Status != 200 {
			t.Fatalf("groups %v: %d %s", q, res.Status, res.Body)
		}
		res.Decode(t, &body)
		if body.Status != "ok" || body.Page != page {
			t.Fatalf("groups %v page %d: %s", q, page, res.Body)
		}
		if want := int((body.TotalGroups + int64(size) - 1) / int64(size)); body.TotalPages != want {
			t.Fatalf("total_pages %d, want %d", body.TotalPages, want)
		}
		if page > body.TotalPages {
			if len(body.Groups) != 0 {
				t.Fatalf("page past the end has groups: %s", res.Body)
			}
			if int64(len(out)) != body.TotalGroups {
				t.Fatalf("%v: walked %d groups, total_groups %d", q, len(out), body.TotalGroups)
			}
			break
		}
		out = append(out, body.Groups...)
	}
	for n := 1; n < len(out); n++ {
		a, b := out[n-1], out[n]
		ordered := a.IssueCount > b.IssueCount || a.IssueCount == b.IssueCount &&
			(a.CWE != nil && cweNum(a.CWE.ID) < cweNum(b.CWE.ID) || a.File != nil && a.File.Path < b.File.Path)
		if !ordered {
			t.Fatalf("%v: groups out of order at %d: %+v then %+v", q, n, a, b)
		}
	}
	return out
}

// allIssues walks every page of GET /issues and checks that no issue
// repeats and that total_issues holds on every page.
func (w *world) allIssues(t *testing.T, q url.Values, size int) ([]issueJSON, int64) {
	t.Helper()
	var out []issueJSON
	seen := map[string]bool{}
	var total int64 = -1
	for page := 1; ; page++ {
		var body issuesPage
		res := w.get(t, "/issues", clone(q, "page", strconv.Itoa(page), "page_size", strconv.Itoa(size)))
		if res.Status != 200 {
			t.Fatalf("issues %v: %d %s", q, res.Status, res.Body)
		}
		res.Decode(t, &body)
		if total >= 0 && body.TotalIssues != total {
			t.Fatalf("total_issues changed between pages: %d then %d", total, body.TotalIssues)
		}
		total = body.TotalIssues
		if len(body.Issues) == 0 {
			break
		}
		for _, i := range body.Issues {
			if seen[i.ID] {
				t.Fatalf("%v: issue %s repeated on page %d", q, i.ID, page)
			}
			seen[i.ID] = true
		}
		out = append(out, body.Issues...)
	}
	if int64(len(out)) != total {
		t.Fatalf("%v: walked %d issues, total_issues %d", q, len(out), total)
	}
	return out, total
}

type filterCase struct {
	q    url.Values
	keep func(findings.Issue) bool
}

func (w *world) filterCases() []filterCase {
	web, mirror, lib := w.projects[0].ID, w.projects[1].ID, w.projects[2].ID
	return []filterCase{
		{vals(), func(findings.Issue) bool { return true }},
		{vals("project", "wEB"), func(i findings.Issue) bool { return i.ProjectID == web }},
		{vals("repo", "HTTPS://GitHub.com/acme/app/"), func(i findings.Issue) bool { return i.ProjectID == web || i.ProjectID == mirror }},
		{vals("branch", "main"), func(i findings.Issue) bool { return i.Branch == "main" }},
		{vals("branch", "feature/#7"), func(i findings.Issue) bool { return i.Branch == "feature/#7" }},
		{vals("project", "Lib", "branch", "dev"), func(i findings.Issue) bool { return i.ProjectID == lib && i.Branch == "dev" }},
		{vals("repo", "github.com/acme/app.git", "branch", "dev"), func(i findings.Issue) bool {
			return (i.ProjectID == web || i.ProjectID == mirror) && i.Branch == "dev"
		}},
	}
}

// checkAgreement compares, for every filter and both group_by values, the
// groups with a recount of the issues, and every group with its drill-down.
func (w *world) checkAgreement(t *testing.T) {
	t.Helper()
	for _, fc := range w.filterCases() {
		var kept []findings.Issue
		for _, i := range w.issues {
			if fc.keep(i) {
				kept = append(kept, i)
			}
		}
		for _, dim := range []string{"cwe", "file_path"} {
			keyOf := func(i findings.Issue) string { return cweKey(i.CWE) }
			drill := "cwe"
			if dim == "file_path" {
				keyOf, drill = func(i findings.Issue) string { return i.FilePath }, "file_path_exact"
			}
			want := map[string][]findings.Issue{}
			for _, i := range kept {
				want[keyOf(i)] = append(want[keyOf(i)], i)
			}
			groups := w.allGroups(t, clone(fc.q, "group_by", dim, "breakdown", "true"), 4)
			if len(groups) != len(want) {
				t.Fatalf("%v %s: %d groups, want %d", fc.q, dim, len(groups), len(want))
			}
			var sum int64
			for _, g := range groups {
				members := want[g.key()]
				sum += g.IssueCount
				if g.IssueCount != int64(len(members)) {
					t.Fatalf("%v %s group %s: count %d, want %d", fc.q, dim, g.key(), g.IssueCount, len(members))
				}
				checkBreakdown(t, g, members)
				got, total := w.allIssues(t, clone(fc.q, drill, g.key()), 9)
				if total != g.IssueCount {
					t.Fatalf("%v drill %s=%s: total_issues %d, group count %d", fc.q, drill, g.key(), total, g.IssueCount)
				}
				sameIDs(t, got, members)
			}
			_, total := w.allIssues(t, fc.q, 25)
			if total != sum || total != int64(len(kept)) {
				t.Fatalf("%v: total_issues %d, sum of %s groups %d, want %d", fc.q, total, dim, sum, len(kept))
			}
		}
	}
}

func checkBreakdown(t *testing.T, g groupJSON, members []findings.Issue) {
	t.Helper()
	if g.Breakdown == nil {
		t.Fatalf("group %s has no breakdown", g.key())
	}
	u, s := map[string]int64{}, map[string]int64{}
	for _, i := range members {
		u[i.Urgency]++
		s[i.Status]++
	}
	for _, code := range findings.Urgencies {
		if g.Breakdown.ByUrgency[code] != u[code] {
			t.Fatalf("group %s by_urgency %v, want %v", g.key(), g.Breakdown.ByUrgency, u)
		}
	}
	for _, st := range findings.Statuses {
		if g.Breakdown.ByStatus[st] != s[st] {
			t.Fatalf("group %s by_status %v, want %v", g.key(), g.Breakdown.ByStatus, s)
		}
	}
}

func sameIDs(t *testing.T, got []issueJSON, want []findings.Issue) {
	t.Helper()
	var a, b []string
	for _, i := range got {
		a = append(a, i.ID)
	}
	for _, i := range want {
		b = append(b, i.ID)
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Fatalf("issues differ:\n got %v\nwant %v", a, b)
	}
}

func TestGroupsAgreeWithIssuesAndDrillDown(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 240, 1)
	w.checkAgreement(t)

	// Urgency and status filters agree with the breakdown cells.
	groups := w.allGroups(t, vals("breakdown", "1", "project", "Web"), 100)
	for _, g := range groups[:3] {
		for code, word := range map[string]string{"CR": "Critical", "hi": "HI", "ME": "medium", "LO": "lo"} {
			_, total := w.allIssues(t, vals("project", "Web", "cwe", g.key(), "urgency", word), 100)
			if want := g.Breakdown.ByUrgency[strings.ToUpper(code)]; total != want {
				t.Fatalf("urgency %s in %s: %d, want %d", word, g.key(), total, want)
			}
		}
		for _, st := range findings.Statuses {
			_, total := w.allIssues(t, vals("project", "Web", "cwe", g.key(), "status", strings.ToUpper(st)), 100)
			if total != g.Breakdown.ByStatus[st] {
				t.Fatalf("status %s in %s: %d, want %d", st, g.key(), total, g.Breakdown.ByStatus[st])
			}
		}
	}

	// Both a CWE and a file: counted from that file's issues.
	want := 0
	for _, i := range w.issues {
		if i.CWE == 79 && i.FilePath == "src/pkg1/file2.go" && i.Branch == "main" {
			want++
		}
	}
	if _, total := w.allIssues(t, vals("cwe", "79", "file_path_exact", "src/pkg1/file2.go", "branch", "main"), 2); total != int64(want) {
		t.Fatalf("cwe+file: %d, want %d", total, want)
	}
}

func TestCWENamesComeFromTheCatalogue(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 120, 2)
	names := map[string]string{}
	for _, g := range w.allGroups(t, vals(), 100) {
		names[g.CWE.ID] = g.CWE.Name + " | " + g.CWE.Description
	}
	for id, prefix := range map[string]string{
		"CWE-79":    "Improper Neutralization of Input During Web Page Generation ('Cross-site Scripting') | The product does not neutralize",
		"CWE-89":    "Improper Neutralization of Special Elements used in an SQL Command ('SQL Injection')",
		"unknown":   "No CWE | ",
		"CWE-99999": "CWE-99999 | CWE-99999 is not in the MITRE CWE catalogue",
	} {
		if !strings.HasPrefix(names[id], prefix) {
			t.Fatalf("%s: %q, want prefix %q", id, names[id], prefix)
		}
	}
}

func TestCountsStayExactAfterStatusChangesAndDeletes(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 150, 3)
	ctx := context.Background()
	n := 0
	for id, i := range w.issues {
		switch n % 3 {
		case 0:
			to := findings.ManualStatuses[(slices.Index(findings.ManualStatuses, i.Status)+1)%len(findings.ManualStatuses)]
			if _, err := bulkload.SetIssueStatus(ctx, env.Store, w.company.ID, id, to); err != nil {
				t.Fatal(err)
			}
			i.Status = to
			w.issues[id] = i
		case 1:
			if err := bulkload.DeleteIssue(ctx, env.Store, w.company.ID, id); err != nil {
				t.Fatal(err)
			}
			delete(w.issues, id)
		}
		n++
	}
	w.checkAgreement(t)
}

func TestNoProjectFound(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 30, 4)
	for _, q := range []url.Values{
		vals("project", "nope"),
		vals("repo", "https://github.com/acme/other"),
		vals("repo", "not a url"),
		vals("branch", "no-such-branch"),
		vals("project", "Lib", "repo", "https://github.com/acme/app"),
	} {
		for _, path := range []string{"/issues/groups", "/issues"} {
			res := w.get(t, path, q)
			if res.Status != 200 || string(res.Body) != "{\"status\":\"no_project_found\"}\n" {
				t.Fatalf("%s %v: %d %s", path, q, res.Status, res.Body)
			}
		}
	}
	// A project without issues exists: an empty ok answer.
	if _, err := env.Store.Catalog.CreateProject(context.Background(), schema.Project{CompanyID: w.company.ID, Name: "Empty"}); err != nil {
		t.Fatal(err)
	}
	var body groupsPage
	w.get(t, "/issues/groups", vals("project", "empty")).Decode(t, &body)
	if body.Status != "ok" || body.TotalGroups != 0 || body.TotalPages != 0 || len(body.Groups) != 0 {
		t.Fatalf("empty project: %+v", body)
	}
}

func TestBadInputIs4xx(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 10, 5)
	for _, c := range []struct{ path, query string }{
		{"/issues/groups", "group_by=severity"},
		{"/issues/groups", "group_by=CWE"},
		{"/issues/groups", "page=0"},
		{"/issues/groups", "page=-1"},
		{"/issues/groups", "page=abc"},
		{"/issues/groups", "page_size=101"},
		{"/issues/groups", "page_size=0"},
		{"/issues/groups", "breakdown=maybe"},
		{"/issues", "cwe=XSS"},
		{"/issues", "cwe=CWE-0"},
		{"/issues", "urgency=urgent"},
		{"/issues", "status=closed"},
		{"/issues", "page_size=1000"},
		{"/issues", "page=1.5"},
	} {
		res := testenv.Do(t, w.h, "GET", c.path+"?"+c.query, "", testenv.Key(w.company.Admin)...)
		if res.Status != 400 || res.JSON(t)["error"] == nil {
			t.Fatalf("%s?%s: %d %s", c.path, c.query, res.Status, res.Body)
		}
	}
	// Unknown parameters are ignored.
	res := w.get(t, "/issues/groups", vals("severity", "x", "sort", "y"))
	if res.Status != 200 {
		t.Fatalf("unknown parameters: %d %s", res.Status, res.Body)
	}
	// No credential.
	for _, path := range []string{"/issues/groups", "/issues", "/issues/sca/" + fmt.Sprint(1), "/scan/x/issues/quality"} {
		if res := testenv.Do(t, w.h, "GET", path, ""); res.Status != 401 {
			t.Fatalf("%s without credential: %d", path, res.Status)
		}
	}
}
