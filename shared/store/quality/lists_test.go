package quality_test

import (
	"context"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/quality"
)

// TestListsPage reads a scan's quality findings (all, and one class of
// three, whose pages merge the classes that match) and its project's in
// pages of four, by token and by number, each with its total.
func TestListsPage(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	x := quality.New(tb, &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention})
	ctx := context.Background()
	if err := x.PutQualityIssues(ctx, 1, issues(15, "Unused variable", "Complexity", "Unused import")); err != nil {
		t.Fatal(err)
	}
	read := func(class string) func(page.Request) (page.Page[quality.Issue], error) {
		return func(q page.Request) (page.Page[quality.Issue], error) {
			return x.ListScanQualityIssues(ctx, 1, scan, class, q)
		}
	}
	all := testenv.Pages(t, 4, testenv.Total(15), read(""))
	if unused := testenv.Pages(t, 4, testenv.Total(10), read("unused")); unused[0].ID != all[0].ID {
		t.Fatalf("the newest unused finding %s, the newest %s", unused[0].ID, all[0].ID)
	}
	testenv.Pages(t, 4, testenv.Total(5), read("complex"))
	project := testenv.Pages(t, 4, testenv.Total(15), func(q page.Request) (page.Page[quality.Issue], error) {
		return x.ListProjectQualityIssues(ctx, 1, 3, q)
	})
	if project[0].ID != all[0].ID {
		t.Fatalf("the project's newest %s, the scan's %s", project[0].ID, all[0].ID)
	}
}
