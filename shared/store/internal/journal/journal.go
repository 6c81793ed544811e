// Package journal is the store's one counter journal. Work that moves many
// counters (a scan's new issues, a bulk write of SCA or quality findings)
// writes what it owes them as journal items, in one partition per piece of
// work, and pays each item with one transaction that moves its counters and
// deletes it, conditional on it still existing. An item is therefore paid
// exactly once however often a crashed or retried writer starts again, and
// whoever finishes the work pays what is left (Pending). The areas decide
// what a move is and how it becomes transaction items.
package journal

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Item is one journal item: counter moves owed, of the area's type M.
// ExpiresAt (unix seconds, the table's TTL attribute) is for journals that
// something settles within a known time, whose items would otherwise stay
// when a writer dies before naming them (see findings' scan journal);
// without it an item stays until it is paid.
type Item[M any] struct {
	ddb.Key
	Moves     []M   `dynamodbav:"moves"`
	ExpiresAt int64 `dynamodbav:"expires_at,omitempty"`
}

// Chunks splits moves into items of at most size moves each, keyed pk and
// prefix followed by the item's number.
func Chunks[M any](pk, prefix string, moves []M, size int, expires int64) []Item[M] {
	var out []Item[M]
	for start := 0; start < len(moves); start += size {
		out = append(out, Item[M]{Key: ddb.Key{PK: pk, SK: fmt.Sprintf("%s%06d", prefix, start/size)},
			Moves: moves[start:min(start+size, len(moves))], ExpiresAt: expires})
	}
	return out
}

// Pending reads, consistently, the items of pk under prefix not paid yet.
func Pending[M any](ctx context.Context, t *ddb.Table, pk, prefix string) ([]Item[M], error) {
	var items []Item[M]
	err := t.QueryAllConsistent(ctx, ddb.PKBeginsWith(pk, prefix), &items)
	return items, err
}

// Pay moves the counters (moves, transaction items the area built) and
// deletes the items paid, in one transaction; ErrConflict when one of them
// was paid meanwhile (or a condition of moves failed).
func Pay(ctx context.Context, t *ddb.Table, paid []ddb.Key, moves []types.TransactWriteItem) error {
	exists := expression.AttributeExists(expression.Name(tabledef.PK))
	items := moves
	for _, k := range paid {
		del, err := t.TxDelete(k, exists)
		if err != nil {
			return err
		}
		items = append(items, del)
	}
	return t.Transact(ctx, items)
}
