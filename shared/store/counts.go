package store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"
)

// Collections whose size a company counter keeps (see txCount).
const (
	countTeams        = "teams"
	countIntegrations = "integrations"
)

func countKey(companyID int64, collection string) Key {
	return Key{PK: CompanyPK(companyID), SK: "COUNT#" + collection}
}

// txCount adds delta to a company's counter of a collection; it goes into
// the transaction that creates or deletes the collection's item, so the
// count is exact whatever fails.
func (s *Store) txCount(companyID int64, collection string, delta int) (types.TransactWriteItem, error) {
	return s.t.TxUpdate(countKey(companyID, collection), expression.Add(expression.Name("n"), expression.Value(delta)), nil)
}

// companyCount reads a company's counter of a collection (0 before the first item).
func (s *Store) companyCount(ctx context.Context, companyID int64, collection string) (int, error) {
	var c struct {
		N int `dynamodbav:"n"`
	}
	err := s.t.GetItem(ctx, countKey(companyID, collection), &c)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	return c.N, err
}

// countedPage reads one page of l into out and, concurrently, the company
// counter of the list's collection: the page and its total.
func (s *Store) countedPage(ctx context.Context, companyID int64, l List, q PageQuery, out any, collection string) (PageResult, int, error) {
	var res PageResult
	var total int
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		res, err = s.queryPage(gctx, l, q, out)
		return err
	})
	g.Go(func() (err error) {
		total, err = s.companyCount(gctx, companyID, collection)
		return err
	})
	return res, total, g.Wait()
}
