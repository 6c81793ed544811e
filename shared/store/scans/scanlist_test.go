package scans_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
)

// TestListScansPage reads a company's scans, a project's and a branch's in
// pages of two, by token and by number, with their counters' totals; a
// status filter's pages are uncounted.
func TestListScansPage(t *testing.T) {
	st, _ := newArea(t)
	ctx := context.Background()
	for c := int64(1); c <= 2; c++ {
		for i := range 5 {
			branch, status := "main", scans.ScanComplete
			if i%2 == 1 {
				branch, status = "dev", scans.ScanProcessing
			}
			if _, err := st.CreateScan(ctx, scans.Scan{CompanyID: c, ProjectID: 3, Branch: branch, Engine: "sarif", Tool: "semgrep",
				RunID: fmt.Sprintf("00000000-0000-4000-8000-%012d", c*10+int64(i)), Status: status}); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := func(sel scans.ScanQuery) func(page.Request) (page.Page[scans.Scan], error) {
		return func(q page.Request) (page.Page[scans.Scan], error) { return st.ListScans(ctx, 1, sel, q) }
	}
	company := testenv.Pages(t, 2, testenv.Total(5), read(scans.ScanQuery{}))
	project := testenv.Pages(t, 2, testenv.Total(5), read(scans.ScanQuery{ProjectID: 3}))
	if len(company) != 5 || company[0].ID != project[0].ID {
		t.Fatalf("company %+v\nproject %+v", company, project)
	}
	if main := testenv.Pages(t, 2, testenv.Total(3), read(scans.ScanQuery{ProjectID: 3, Branch: "main"})); main[0].Branch != "main" {
		t.Fatalf("main: %+v", main)
	}
	if processing := testenv.Pages(t, 1, nil, read(scans.ScanQuery{ProjectID: 3, Status: scans.ScanProcessing})); len(processing) != 2 {
		t.Fatalf("processing: %+v", processing)
	}
}
