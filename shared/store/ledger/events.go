package ledger

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// TxEvent is the Put that records e in a write path's transaction. It is
// unconditional: a retried transaction rewrites the same item (same id),
// which the stream reports as a MODIFY the dispatcher ignores.
func (l *Ledger) TxEvent(e schema.Event) (types.TransactWriteItem, error) {
	it, err := e.Item(l.T.Clock())
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return l.T.TxPut(it, nil)
}

// RecordEvent records an event on its own, for producers whose state change
// is not a store write (a scheduled check, a digest).
func (l *Ledger) RecordEvent(ctx context.Context, e schema.Event) error {
	it, err := e.Item(l.T.Clock())
	if err != nil {
		return err
	}
	return l.T.PutItem(ctx, it, nil)
}

// RecordEventOnce records e unless an event with its id was ever recorded:
// a marker item without expiry is written with the event in one
// transaction, so a check that runs again (the scheduled SLA check, the
// weekly digest) raises each event once, even after the outbox item has
// expired. It reports whether the event was new.
func (l *Ledger) RecordEventOnce(ctx context.Context, e schema.Event) (bool, error) {
	it, err := e.Item(l.T.Clock())
	if err != nil {
		return false, err
	}
	marker, err := l.T.TxPutNew(schema.EventOnceKey(e.CompanyID, e.ID))
	if err != nil {
		return false, err
	}
	put, err := l.T.TxPut(it, nil)
	if err != nil {
		return false, err
	}
	err = l.T.Transact(ctx, []types.TransactWriteItem{marker, put})
	if errors.Is(err, ddb.ErrConflict) {
		return false, nil
	}
	return err == nil, err
}
