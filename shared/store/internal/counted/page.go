package counted

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
)

// Page reads one page of list and, concurrently, the company counter of
// the list's collection: the page with its total.
func Page[T any](ctx context.Context, t *ddb.Table, l *ledger.Ledger, companyID int64, list page.List, q page.Request, collection string) (page.Page[T], error) {
	var p page.Page[T]
	var total int
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		p, err = page.ReadPage[T](gctx, t, list, q)
		return err
	})
	g.Go(func() (err error) {
		total, err = l.CompanyCount(gctx, companyID, collection)
		return err
	})
	if err := g.Wait(); err != nil {
		return page.Page[T]{}, err
	}
	return p.Counted(int64(total)), nil
}
