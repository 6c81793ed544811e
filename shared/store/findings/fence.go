package findings

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/journal"
	"github.com/acme/codescan-api/shared/store/internal/lease"
)

// Fenced writes. A scan's writes to its branch are made under the lease
// of the branch's head, and every one that can move a count is fenced
// (internal/lease's Fence): a transaction carries a condition check on the
// head naming the holding, so a holder frozen past its lease cannot write
// after the next holder took the branch (and settled, or applied, what the
// counters owe). The fence rides on the context of the holder's work
// (withFence), so the write path's transactions (commitIssues, the journal
// payments, the counter settlements) are fenced under a lease and
// unchanged for triage and the loaders, which hold none.
//
// The writes left unfenced cannot move a count, late or not:
//   - the scan's membership chunks (scans.PutMembers): only a completed
//     scan's members are read as a branch's truth, and completing names
//     the scan on the head in a fenced transaction; a late chunk rewrites
//     what any attempt of the same scan writes;
//   - a journal's items and brief (writeJournal): only the marker names
//     their generation, written in a fenced transaction; items of a
//     generation no marker names are never paid, and expire;
//   - the lease's own extension and release, conditional on the owner.

// ErrLeaseLost is the error (wrapped, with ddb.ErrUnavailable: try again)
// of an apply whose lease on its branch was lost while it wrote: the
// extension was refused, or a fenced write was. The apply stopped and is
// to be started again from scratch, under a new lease.
var ErrLeaseLost = lease.ErrLost

type fenceKey struct{}

// withFence is ctx for work under the lease f.
func withFence(ctx context.Context, f lease.Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

func fenceOf(ctx context.Context) (lease.Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(lease.Fence)
	return f, ok
}

// fenceRoom is how many items of a transaction the fence takes: the write
// path's transactions leave room for it, under a lease or not.
const fenceRoom = 1

// leaseLost is the error of a write refused by its fence.
func leaseLost(f lease.Fence) error {
	return fmt.Errorf("%w: %w: %s no longer holds %s/%s", lease.ErrLost, ddb.ErrUnavailable, f.Owner, f.Key.PK, f.Key.SK)
}

// fenced is items with the context's fence checked last (items unchanged
// without one), and the index of the check (-1 without).
func (x *Findings) fenced(ctx context.Context, items []types.TransactWriteItem) ([]types.TransactWriteItem, int, error) {
	f, ok := fenceOf(ctx)
	if !ok {
		return items, -1, nil
	}
	check, err := f.Check(x.t)
	if err != nil {
		return nil, -1, err
	}
	out := append(items[:len(items):len(items)], check)
	return out, len(out) - 1, nil
}

// refused maps a transaction's failure at the fence (item at) to the
// lease's loss; other errors are err.
func refused(ctx context.Context, err error, at int) error {
	if f, ok := fenceOf(ctx); ok && at >= 0 && ddb.ConditionFailedAt(err, at) {
		return leaseLost(f)
	}
	return err
}

// transact writes items in one transaction, fenced under a lease.
func (x *Findings) transact(ctx context.Context, items []types.TransactWriteItem) error {
	items, at, err := x.fenced(ctx, items)
	if err != nil {
		return err
	}
	return refused(ctx, x.t.Transact(ctx, items), at)
}

// pay pays journal items (see journal.Pay), fenced under a lease: the
// check goes last among the moves, before the deletes journal.Pay adds.
func (x *Findings) pay(ctx context.Context, paid []ddb.Key, moves []types.TransactWriteItem) error {
	moves, at, err := x.fenced(ctx, moves)
	if err != nil {
		return err
	}
	return refused(ctx, journal.Pay(ctx, x.t, paid, moves), at)
}

// maxTxBytes bounds the items of one transaction of writeAll, below
// DynamoDB's 4 MB (estimated by itemSize, which errs high).
const maxTxBytes = 3 << 20

// writeAll writes items (puts of structs or marshalled items, or
// ddb.Keys to delete) in transactions of as many as fit, one after the
// other, each fenced under a lease: in place of BatchPutParallel for
// items a late write of which could make the counters wrong. One after
// the other: transactions that check the same head item at the same time
// conflict.
func (x *Findings) writeAll(ctx context.Context, items []any) error {
	var tx []types.TransactWriteItem
	size := 0
	for _, it := range items {
		w, n, err := x.txWrite(it)
		if err != nil {
			return err
		}
		if len(tx) > 0 && (len(tx)+fenceRoom == ddb.MaxTxItems || size+n > maxTxBytes) {
			if err := x.transact(ctx, tx); err != nil {
				return err
			}
			tx, size = nil, 0
		}
		tx, size = append(tx, w), size+n
	}
	if len(tx) == 0 {
		return nil
	}
	return x.transact(ctx, tx)
}

// txWrite is it's unconditional write and its estimated size.
func (x *Findings) txWrite(it any) (types.TransactWriteItem, int, error) {
	if k, ok := it.(ddb.Key); ok {
		return x.t.TxDeleteKey(k), len(k.PK) + len(k.SK), nil
	}
	av, ok := it.(map[string]types.AttributeValue)
	if !ok {
		var err error
		if av, err = attributevalue.MarshalMap(it); err != nil {
			return types.TransactWriteItem{}, 0, fmt.Errorf("marshal item: %w", err)
		}
	}
	w, err := x.t.TxPut(av, nil)
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

// lostCause wraps err with the lease's loss when the work's context was
// cancelled because the lease was lost (lease.Keep), as a fenced write's
// refusal is: the caller tells both apart from other failures the same way.
func lostCause(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, lease.ErrLost) || !errors.Is(context.Cause(ctx), lease.ErrLost) {
		return err
	}
	return fmt.Errorf("%w: %w: %w", lease.ErrLost, ddb.ErrUnavailable, err)
}
