package sca_test

import (
	"context"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
)

// TestListsPage reads the SCA findings of a scan, of its project and of
// the company in pages of seven, by token and by number, each with its
// counter's total; another company's lists are empty.
func TestListsPage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	sc := scans.Scan{ID: "6d0f3a52-8c1e-4e7a-9d3b-2f6c5a1e0d94", CompanyID: 1, ProjectID: 3, Branch: "main", Engine: "osv", Tool: "osv", CreatedAt: "2026-11-27T10:00:00Z"}
	if err := w.sca.PutScanSCAIssues(ctx, 1, sc, findings(sc, 30)); err != nil {
		t.Fatal(err)
	}
	thirty := testenv.Total(30)
	read := func(company, project int64) func(page.Request) (page.Page[sca.Issue], error) {
		return func(q page.Request) (page.Page[sca.Issue], error) {
			return w.sca.ListSCAIssues(ctx, company, project, q)
		}
	}
	project := testenv.Pages(t, 7, thirty, read(1, 3))
	if all := testenv.Pages(t, 7, thirty, read(1, 0)); len(all) != 30 || len(project) != 30 {
		t.Fatalf("company %d, project %d", len(all), len(project))
	}
	ofScan := testenv.Pages(t, 7, thirty, func(q page.Request) (page.Page[sca.Issue], error) { return w.sca.ListScanSCAIssues(ctx, 1, sc.ID, q) })
	for n, i := range ofScan {
		if i.ID != project[n].ID {
			t.Fatalf("finding %d: the scan's %s, the project's %s (both by id)", n, i.ID, project[n].ID)
		}
	}
	testenv.Pages(t, 7, testenv.Total(0), read(2, 0))
}
