package counted

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
)

// Page reads one page of list into out and, concurrently, the company
// counter of the list's collection: the page and its total.
func Page(ctx context.Context, t *ddb.Table, l *ledger.Ledger, companyID int64, list page.List, q page.Request, out any, collection string) (page.Result, int, error) {
	var res page.Result
	var total int
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		res, err = page.Read(gctx, t, list, q, out)
		return err
	})
	g.Go(func() (err error) {
		total, err = l.CompanyCount(gctx, companyID, collection)
		return err
	})
	return res, total, g.Wait()
}
