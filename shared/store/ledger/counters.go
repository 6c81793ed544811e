package ledger

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// TxCount adds delta to a company's counter of a collection; it goes into
// the transaction that creates or deletes the collection's item, so the
// count is exact whatever fails.
func (l *Ledger) TxCount(companyID int64, collection string, delta int) (types.TransactWriteItem, error) {
	return l.T.TxUpdate(schema.CountKey(companyID, collection), expression.Add(expression.Name("n"), expression.Value(delta)), nil)
}

// CompanyCount reads a company's counter of a collection (0 before the first item).
func (l *Ledger) CompanyCount(ctx context.Context, companyID int64, collection string) (int, error) {
	var c struct {
		N int `dynamodbav:"n"`
	}
	err := l.T.GetItem(ctx, schema.CountKey(companyID, collection), &c)
	if errors.Is(err, ddb.ErrNotFound) {
		return 0, nil
	}
	return c.N, err
}

// TxAdd adds n to a counter item (created at zero).
func (l *Ledger) TxAdd(k ddb.Key, n int64, cond *expression.ConditionBuilder) (types.TransactWriteItem, error) {
	return l.T.TxUpdate(k, expression.Add(expression.Name("count"), expression.Value(n)), cond)
}

// CounterValue reads a counter item (0 before its first move).
func (l *Ledger) CounterValue(ctx context.Context, k ddb.Key) (int64, error) {
	var c schema.Counter
	err := l.T.GetItem(ctx, k, &c)
	if errors.Is(err, ddb.ErrNotFound) {
		return 0, nil
	}
	return c.Count, err
}
