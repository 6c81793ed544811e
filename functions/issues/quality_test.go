package issues_test

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/quality"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

type qualityPage struct {
	Status      string          `json:"status"`
	Page        int             `json:"page"`
	TotalPages  int             `json:"total_pages"`
	TotalIssues int             `json:"total_issues"`
	Issues      []quality.Issue `json:"issues"`
}

func qualityIssue(scanID string, k int) quality.Issue {
	q := quality.Issue{
		ID:                 fmt.Sprintf("10000000-0000-4000-8000-%012d", k),
		ScanID:             scanID,
		Classification:     quality.Classification{ID: "QC" + strconv.Itoa(k%3), Name: []string{"Dead Code", "Code Duplication", "Complexity"}[k%3], Description: "d"},
		Urgency:            findings.Urgencies[k%4],
		CreatedAt:          fmt.Sprintf("2025-02-%02dT08:00:00Z", 1+k/4), // four issues share each time
		FirstDetectionDate: "2025-01-01T00:00:00Z",
		Status:             "open",
		SLAStatus:          "overdue",
		Location: quality.Location{
			File:       quality.File{Name: "a.go", Language: "go", Path: "src/a.go", GitHash: "abc"},
			Project:    quality.Project{Name: "Web", Branch: "main", GitSHA: "def"},
			LineNumber: 10 + k, SinkLineNumber: 20 + k,
		},
		AutoTriage:   quality.AutoTriage{FalsePositiveDetection: quality.FalsePositiveDetection{Status: "valid", Reasoning: "r"}},
		Reachability: quality.Reachability{IsReachable: k%2 == 0, EndpointCount: k},
	}
	if k%2 == 0 {
		q.AutoFixSuggestion = &quality.AutoFixSuggestion{ID: fmt.Sprintf("20000000-0000-4000-8000-%012d", k), Status: "fix_available",
			Patch: quality.FixPatch{Diff: "-a\n+b", Explanation: "e", FullCode: "b"}}
		q.AssignedTo = &quality.Assignee{ID: "7", Email: "dev@acme.test", Name: "Dev"}
	}
	return q
}

func TestQualityList(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 0, 6)
	other := newWorld(t, env, "Other", 0, 7)
	ctx := context.Background()
	scan, err := env.Store.Scans.CreateScan(ctx, scans.Scan{CompanyID: w.company.ID, ProjectID: w.projects[0].ID, Branch: "main", Engine: "quality"})
	if err != nil {
		t.Fatal(err)
	}
	var written []quality.Issue
	for k := 0; k < 60; k++ {
		written = append(written, qualityIssue(scan.ID, k))
	}
	if err := env.Store.Quality.PutQualityIssues(ctx, w.company.ID, written); err != nil {
		t.Fatal(err)
	}
	path := "/scan/" + scan.ID + "/issues/quality"

	// Every page, newest first, ties by id ascending; the fields round-trip.
	var all []quality.Issue
	for page := 1; page <= 3; page++ {
		var body qualityPage
		res := w.get(t, path, vals("page", strconv.Itoa(page), "page_size", "25"))
		res.Decode(t, &body)
		if res.Status != 200 || body.TotalIssues != 60 || body.TotalPages != 3 || body.Page != page {
			t.Fatalf("page %d: %d %s", page, res.Status, res.Body)
		}
		all = append(all, body.Issues...)
	}
	if len(all) != 60 {
		t.Fatalf("walked %d issues", len(all))
	}
	for n := 1; n < len(all); n++ {
		a, b := all[n-1], all[n]
		if a.CreatedAt < b.CreatedAt || a.CreatedAt == b.CreatedAt && a.ID > b.ID {
			t.Fatalf("out of order at %d: %s %s then %s %s", n, a.CreatedAt, a.ID, b.CreatedAt, b.ID)
		}
	}
	byID := map[string]quality.Issue{}
	for _, q := range written {
		q.CompanyID = 0
		byID[q.ID] = q
	}
	for _, q := range all {
		want := byID[q.ID]
		want.ScanID, want.Key = "", ddb.Key{}
		if !reflect.DeepEqual(q, want) {
			t.Fatalf("issue %s:\n got %+v\nwant %+v", q.ID, q, want)
		}
	}

	// Default page size 20; classification is a partial, case-insensitive
	// match on the name.
	var body qualityPage
	w.get(t, path, nil).Decode(t, &body)
	if len(body.Issues) != 20 || body.TotalPages != 3 {
		t.Fatalf("default page: %d issues, %d pages", len(body.Issues), body.TotalPages)
	}
	w.get(t, path, vals("classification", "dUPLIC", "page_size", "50")).Decode(t, &body)
	if body.TotalIssues != 20 || len(body.Issues) != 20 {
		t.Fatalf("classification filter: %d", body.TotalIssues)
	}
	for _, q := range body.Issues {
		if q.Classification.Name != "Code Duplication" {
			t.Fatalf("filter kept %q", q.Classification.Name)
		}
	}

	for _, c := range []struct {
		path   string
		q      url.Values
		status int
	}{
		{path, vals("page_size", "51"), 400},
		{path, vals("page", "0"), 400},
		{"/scan/not-a-uuid/issues/quality", nil, 400},
		{"/scan/00000000-0000-4000-8000-000000000000/issues/quality", nil, 404},
	} {
		if res := w.get(t, c.path, c.q); res.Status != c.status || res.JSON(t)["error"] == nil {
			t.Fatalf("%s %v: %d %s", c.path, c.q, res.Status, res.Body)
		}
	}
	// Another company's scan answers like an unknown one.
	res := other.get(t, path, nil)
	if res.Status != 404 || string(res.Body) != "{\"error\":\"Scan not found\"}\n" {
		t.Fatalf("other company: %d %s", res.Status, res.Body)
	}
}

func TestSCAIssue(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 0, 8)
	other := newWorld(t, env, "Other", 0, 9)
	in := sca.Issue{
		ProjectID: w.projects[0].ID, CreatedAt: "2025-04-01T12:00:00Z",
		Description: "Prototype pollution in lodash", Details: "Versions before 4.17.21 ...",
		Severity: "CRITICAL", CVSSScore: 9.1, Classification: "Prototype Pollution", CVE: "CVE-2021-23337",
		Package:  sca.Package{Name: "lodash", Version: "4.17.20", Ecosystem: "npm", FixVersion: "4.17.21"},
		Location: sca.Location{Path: "package-lock.json"},
		Reachability: sca.Reachability{Status: "not_direct_dependency", Description: "Used through a transitive dependency",
			Usages: []sca.Usage{{ID: "30000000-0000-4000-8000-000000000001", Filename: "src/app.js", CodeLine: "_.template(x)",
				IsFunctionReachable: "true", Reasoning: "template is called with user input"}}},
		Status: "open",
	}
	stored, err := env.Store.SCA.PutSCAIssue(context.Background(), w.company.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	res := w.get(t, "/issues/sca/"+stored.ID, nil)
	var body struct {
		Status string    `json:"status"`
		Issue  sca.Issue `json:"issue"`
	}
	res.Decode(t, &body)
	in.ID, in.ProjectID = stored.ID, 0
	if res.Status != 200 || body.Status != "ok" || !reflect.DeepEqual(body.Issue, in) {
		t.Fatalf("SCA issue: %d\n got %+v\nwant %+v", res.Status, body.Issue, in)
	}
	for _, c := range []struct {
		w  *world
		id string
	}{{w, "00000000-0000-4000-8000-000000000000"}, {w, "nope"}, {other, stored.ID}} {
		res := c.w.get(t, "/issues/sca/"+c.id, nil)
		if res.Status != 404 || string(res.Body) != "{\"message\":\"SCA issue not found\",\"status\":\"error\"}\n" {
			t.Fatalf("%s: %d %s", c.id, res.Status, res.Body)
		}
	}
}

func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	acme := newWorld(t, env, "Acme", 60, 10)
	globex := newWorld(t, env, "Globex", 25, 11)
	// Same project names in both companies: each sees only its own issues.
	for _, w := range []*world{acme, globex} {
		var body groupsPage
		w.get(t, "/issues/groups", vals("page_size", "100")).Decode(t, &body)
		var sum int64
		for _, g := range body.Groups {
			sum += g.IssueCount
		}
		if sum != int64(len(w.issues)) {
			t.Fatalf("%s sees %d issues in groups, owns %d", w.company.Name, sum, len(w.issues))
		}
		got, _ := w.allIssues(t, vals("project", "Web"), 100)
		for _, i := range got {
			if _, mine := w.issues[i.ID]; !mine {
				t.Fatalf("%s sees issue %s of another company", w.company.Name, i.ID)
			}
		}
	}
	// Another company's project name and branch are unknown.
	if _, err := env.Store.Catalog.CreateProject(context.Background(), schema.Project{CompanyID: acme.company.ID, Name: "Acme-Only"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []url.Values{vals("project", "Acme-Only")} {
		if res := globex.get(t, "/issues/groups", q); string(res.Body) != "{\"status\":\"no_project_found\"}\n" {
			t.Fatalf("other company's project: %s", res.Body)
		}
	}
}
