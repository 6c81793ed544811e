package lease

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// Fenced writes: the fence of a holding rides on the context of the
// holder's work (WithFence), so the transactions a write path makes
// through Transact, WriteAll and Fenced are fenced under a lease and
// unchanged for writers that hold none.

type fenceKey struct{}

// WithFence is ctx for work under the lease f.
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

func FenceOf(ctx context.Context) (Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(Fence)
	return f, ok
}

// FenceRoom is how many items of a transaction the fence takes: the write
// path's transactions leave room for it, under a lease or not.
const FenceRoom = 1

// lostError is the error of a write refused by its fence.
func lostError(f Fence) error {
	return fmt.Errorf("%w: %w: %s no longer holds %s/%s", ErrLost, ddb.ErrUnavailable, f.Owner, f.Key.PK, f.Key.SK)
}

// Fenced is items with the context's fence checked last (items unchanged
// without one), and the index of the check (-1 without).
func Fenced(ctx context.Context, t *ddb.Table, items []types.TransactWriteItem) ([]types.TransactWriteItem, int, error) {
	f, ok := FenceOf(ctx)
	if !ok {
		return items, -1, nil
	}
	check, err := f.Check(t)
	if err != nil {
		return nil, -1, err
	}
	out := append(items[:len(items):len(items)], check)
	return out, len(out) - 1, nil
}

// Refused maps a transaction's failure at the fence (item at) to the
// lease's loss; other errors are err.
func Refused(ctx context.Context, err error, at int) error {
	if f, ok := FenceOf(ctx); ok && at >= 0 && ddb.ConditionFailedAt(err, at) {
		return lostError(f)
	}
	return err
}

// Transact writes items in one transaction, fenced under a lease.
func Transact(ctx context.Context, t *ddb.Table, items []types.TransactWriteItem) error {
	items, at, err := Fenced(ctx, t, items)
	if err != nil {
		return err
	}
	return Refused(ctx, t.Transact(ctx, items), at)
}

// MaxTxBytes bounds the items of one transaction of writeAll, below
// DynamoDB's 4 MB (estimated by itemSize, which errs high).
const MaxTxBytes = 3 << 20

// WriteAll writes items (puts of structs or marshalled items, or
// ddb.Keys to delete) in transactions of as many as fit, one after the
// other, each fenced under a lease: in place of BatchPutParallel for
// items a late write of which could make the counters wrong. One after
// the other: transactions that check the same head item at the same time
// conflict.
func WriteAll(ctx context.Context, t *ddb.Table, items []any) error {
	var tx []types.TransactWriteItem
	size := 0
	for _, it := range items {
		w, n, err := txWrite(t, it)
		if err != nil {
			return err
		}
		if len(tx) > 0 && (len(tx)+FenceRoom == ddb.MaxTxItems || size+n > MaxTxBytes) {
			if err := Transact(ctx, t, tx); err != nil {
				return err
			}
			tx, size = nil, 0
		}
		tx, size = append(tx, w), size+n
	}
	if len(tx) == 0 {
		return nil
	}
	return Transact(ctx, t, tx)
}

// txWrite is it's unconditional write and its estimated size.
func txWrite(t *ddb.Table, it any) (types.TransactWriteItem, int, error) {
	if k, ok := it.(ddb.Key); ok {
		return t.TxDeleteKey(k), len(k.PK) + len(k.SK), nil
	}
	av, ok := it.(map[string]types.AttributeValue)
	if !ok {
		var err error
		if av, err = attributevalue.MarshalMap(it); err != nil {
			return types.TransactWriteItem{}, 0, fmt.Errorf("marshal item: %w", err)
		}
	}
	w, err := t.TxPut(av, nil)
	return w, itemSize(&types.AttributeValueMemberM{Value: av}), err
}

// itemSize estimates an attribute value's size as DynamoDB counts it
// (names and values), rounding numbers up to their text and adding a few
// bytes per value.
func itemSize(av types.AttributeValue) int {
	n := 3
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		n += len(v.Value)
	case *types.AttributeValueMemberN:
		n += len(v.Value)
	case *types.AttributeValueMemberB:
		n += len(v.Value)
	case *types.AttributeValueMemberSS:
		for _, s := range v.Value {
			n += len(s) + 3
		}
	case *types.AttributeValueMemberNS:
		for _, s := range v.Value {
			n += len(s) + 3
		}
	case *types.AttributeValueMemberBS:
		for _, b := range v.Value {
			n += len(b) + 3
		}
	case *types.AttributeValueMemberL:
		for _, e := range v.Value {
			n += itemSize(e)
		}
	case *types.AttributeValueMemberM:
		for k, e := range v.Value {
			n += len(k) + itemSize(e)
		}
	}
	return n
}

// LostCause wraps err with the lease's loss when the work's context was
// cancelled because the lease was lost (lease.Keep), as a fenced write's
// refusal is: the caller tells both apart from other failures the same way.
func LostCause(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrLost) || !errors.Is(context.Cause(ctx), ErrLost) {
		return err
	}
	return fmt.Errorf("%w: %w: %w", ErrLost, ddb.ErrUnavailable, err)
}
