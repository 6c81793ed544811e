package store

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/acme/codescan-api/shared/store/page"
)

// countedPage reads one page of l into out and, concurrently, the company
// counter of the list's collection: the page and its total.
func (s *Store) countedPage(ctx context.Context, companyID int64, l page.List, q PageQuery, out any, collection string) (PageResult, int, error) {
	var res PageResult
	var total int
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		res, err = s.readPage(gctx, l, q, out)
		return err
	})
	g.Go(func() (err error) {
		total, err = s.l.CompanyCount(gctx, companyID, collection)
		return err
	})
	return res, total, g.Wait()
}
