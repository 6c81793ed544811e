package issues_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/quality"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
)

// listPage is a page of any of the issue lists, the issues kept by id.
type listPage struct {
	Status        string `json:"status"`
	Page          int    `json:"page"`
	TotalPages    int    `json:"total_pages"`
	TotalIssues   int    `json:"total_issues"`
	NextPageToken string `json:"next_page_token"`
	Issues        []struct {
		ID string `json:"id"`
	} `json:"issues"`
}

func (w *world) page(t *testing.T, path string, q url.Values) listPage {
	t.Helper()
	res := w.get(t, path, q)
	if res.Status != 200 {
		t.Fatalf("%s %v: %d %s", path, q, res.Status, res.Body)
	}
	var p listPage
	res.Decode(t, &p)
	return p
}

// walk reads every page of a list by number and by cursor, checks that
// both see want (ids, in order) with the same page numbers and totals, and
// returns a token of the second page.
func (w *world) walk(t *testing.T, path string, q url.Values, size int, want []string) string {
	t.Helper()
	pages := (len(want) + size - 1) / size
	var byNumber, byCursor []string
	token, second := "", ""
	for n := 1; n <= max(pages, 1); n++ {
		p := w.page(t, path, clone(q, "page", strconv.Itoa(n), "page_size", strconv.Itoa(size)))
		c := w.page(t, path, clone(q, "next_page_token", token, "page_size", strconv.Itoa(size)))
		for _, x := range []listPage{p, c} {
			if x.Page != n || x.TotalIssues != len(want) || x.TotalPages != pages || (x.NextPageToken == "") != (n >= pages) {
				t.Fatalf("%s %v page %d: page %d of %d, %d issues, token %q", path, q, n, x.Page, x.TotalPages, x.TotalIssues, x.NextPageToken)
			}
		}
		for _, i := range p.Issues {
			byNumber = append(byNumber, i.ID)
		}
		for _, i := range c.Issues {
			byCursor = append(byCursor, i.ID)
		}
		if token = c.NextPageToken; n == 1 {
			second = token
		}
	}
	if !slices.Equal(byNumber, want) || !slices.Equal(byCursor, want) {
		t.Fatalf("%s %v:\n by number %v\n by cursor %v\n      want %v", path, q, byNumber, byCursor, want)
	}
	return second
}

// The quality list of a scan pages by number and by cursor alike, for
// every classification filter (none, one class, two of three, all, none
// matching), against the seed's answer computed here from what was
// written.
func TestQualityListPagesByKey(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 0, 21)
	ctx := context.Background()
	scan, err := env.Store.Scans.CreateScan(ctx, scans.Scan{CompanyID: w.company.ID, ProjectID: w.projects[0].ID, Branch: "main", Engine: "quality"})
	if err != nil {
		t.Fatal(err)
	}
	var written []quality.Issue
	for k := 0; k < 47; k++ {
		q := qualityIssue(scan.ID, k)
		q.ProjectID = w.projects[0].ID
		written = append(written, q)
	}
	if err := env.Store.Quality.PutQualityIssues(ctx, w.company.ID, written); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(written, func(a, b quality.Issue) int {
		if c := strings.Compare(b.CreatedAt, a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	path := "/scan/" + scan.ID + "/issues/quality"
	tokens := map[string]string{}
	for _, filter := range []string{"", "dUPLIC", "code", "C", "nothing"} {
		var want []string
		for _, q := range written {
			if strings.Contains(strings.ToLower(q.Classification.Name), strings.ToLower(filter)) {
				want = append(want, q.ID)
			}
		}
		tokens[filter] = w.walk(t, path, vals("classification", filter), 5, want)
	}
	var all []string
	for _, q := range written {
		all = append(all, q.ID)
	}
	w.walk(t, "/issues/code-quality", vals("project", "Web"), 10, all)

	// A token opens only the list and filter it came from; an edited one
	// is refused.
	tok := tokens["code"]
	for _, q := range []url.Values{
		vals("classification", "dup", "next_page_token", tok),
		vals("next_page_token", tok),
		vals("classification", "code", "next_page_token", tok[:len(tok)-3]+"AAA"),
	} {
		if res := w.get(t, path, q); res.Status != 400 {
			t.Fatalf("%v: %d %s", q, res.Status, res.Body)
		}
	}
	if res := w.get(t, "/issues/code-quality", vals("project", "Web", "next_page_token", tok)); res.Status != 400 {
		t.Fatalf("a scan's token on the project's list: %d %s", res.Status, res.Body)
	}
}

// The SCA lists (a scan's, the company's, a project's) page by key with
// totals from their counters; a token is bound to its list and company.
func TestSCAListsPageByKey(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 0, 22)
	other := newWorld(t, env, "Other", 0, 23)
	ctx := context.Background()
	byProject := map[int64][]string{}
	var all, first []string
	for n, p := range w.projects[:2] {
		sc, err := env.Store.Scans.CreateScan(ctx, scans.Scan{CompanyID: w.company.ID, ProjectID: p.ID, Branch: "main", Engine: "osv"})
		if err != nil {
			t.Fatal(err)
		}
		var found []sca.Issue
		for k := range 23 + 10*n {
			found = append(found, sca.Issue{ID: findings.IssueID(w.company.ID, p.ID, "main", "osv", fmt.Sprint(k)), ProjectID: p.ID, Branch: "main",
				Severity: "HIGH", Package: sca.Package{Name: fmt.Sprint("pkg", k), Version: "1.0.0", Ecosystem: "npm"}})
			byProject[p.ID] = append(byProject[p.ID], found[k].ID)
		}
		if err := env.Store.SCA.PutScanSCAIssues(ctx, w.company.ID, sc, found); err != nil {
			t.Fatal(err)
		}
		all = append(all, byProject[p.ID]...)
		slices.Sort(byProject[p.ID])
		if n == 0 {
			first = byProject[p.ID]
			w.walk(t, "/scan/"+sc.ID+"/issues/sca", nil, 4, first)
		}
	}
	slices.Sort(all)
	tok := w.walk(t, "/issues/sca", nil, 6, all)
	w.walk(t, "/issues/sca", vals("project", "web-mirror"), 5, byProject[w.projects[1].ID])
	testenv.Recount(t, env.Store, w.company.ID)

	// Another company's request with this company's token, a project's
	// list with the company's token, and an edited token: 400.
	raw, _ := json.Marshal(tok)
	for _, c := range []struct {
		w *world
		q url.Values
	}{
		{other, vals("next_page_token", tok)},
		{w, vals("project", "web", "next_page_token", tok)},
		{w, vals("next_page_token", strings.Replace(tok, tok[2:4], "zz", 1))},
		{w, vals("page_token", tok, "next_page_token", string(raw))},
	} {
		if res := c.w.get(t, "/issues/sca", c.q); res.Status != 400 {
			t.Fatalf("%v: %d %s", c.q, res.Status, res.Body)
		}
	}
	// The old name of the parameter is taken too.
	if p := w.page(t, "/issues/sca", vals("page_token", tok, "page_size", "6")); p.Page != 2 || len(p.Issues) != 6 || p.Issues[0].ID != all[6] {
		t.Fatalf("page_token: %+v", p)
	}
}

// GET /issues pages by cursor exactly as by number, across CWE groups and
// scopes, with urgency/status filters and the uncounted CWE-and-file
// filter; a token is bound to its filters and company.
func TestIssuesPageByKey(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 150, 24)
	other := newWorld(t, env, "Other", 20, 25)
	var tok string
	for _, q := range []url.Values{
		nil,
		vals("project", "Web"),
		vals("branch", "main"),
		vals("repo", "https://github.com/acme/app", "urgency", "HI"),
		vals("cwe", "79", "status", "open"),
		vals("file_path_exact", "src/pkg1/file2.go"),
		vals("cwe", "89", "file_path_exact", "src/pkg0/file1.go"),
	} {
		got, _ := w.allIssues(t, q, 100)
		var want []string
		for _, i := range got {
			want = append(want, i.ID)
		}
		if second := w.walk(t, "/issues", q, 7, want); q == nil {
			tok = second
		}
	}
	for _, c := range []struct {
		w *world
		q url.Values
	}{
		{other, vals("next_page_token", tok)},
		{w, vals("project", "Web", "next_page_token", tok)},
		{w, vals("urgency", "LO", "next_page_token", tok)},
		{w, vals("next_page_token", "x"+tok)},
	} {
		if res := c.w.get(t, "/issues", c.q); res.Status != 400 {
			t.Fatalf("%v: %d %s", c.q, res.Status, res.Body)
		}
	}
}
