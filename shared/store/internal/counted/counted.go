// Package counted is the store's generic counted write: items written in
// bulk (by concurrent ingestions, by retries, again and again with the
// same content) that keep the counters they count in exact, through the
// counter journal (internal/journal; see Put). Areas that count what they
// write in bulk (SCA and quality findings, exploit lists) use it.
package counted

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/journal"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Counted writes keep list totals (a project's SCA and quality findings, a
// scan's quality classifications) exact on write, for items written in
// bulk outside the issues' branch lease: by concurrent ingestions, by
// retries, again and again with the same content.
//
// Every counted item records the counters it is counted in (countedAttr).
// An item whose counters change (it is new, or it moved) is written in a
// transaction, conditional on the stored item being what was read, together
// with a journal item holding the counter moves. Journal items are then
// applied: each is deleted in the transaction that adds its moves to the
// counters, many at a time, so a counter is written a few times per call
// however many items it gains. A crash leaves journal items, which the next
// write to the same journal partition applies; a failed condition (a
// concurrent writer) reads the items again. An item stored exactly as it
// would be written is not written at all.

// countedAttr holds, on a counted item, the counters it is counted in:
// "PK|SK" keys, sorted, separated by spaces.
const countedAttr = "counted"

// Ref is a counter an item counts in. Label, when set, is stored on
// the counter (a directory entry's name).
type Ref struct {
	Key   ddb.Key
	Label string
}

// Item is one item of a counted write. Build returns the item to
// store given the stored one (nil when there is none) and the counters it
// counts in.
type Item struct {
	Key   ddb.Key
	Build func(old map[string]types.AttributeValue) (item any, counts []Ref, err error)
}

// journalMove is one counter move of a journal item.
type journalMove struct {
	PK    string `dynamodbav:"pk"`
	SK    string `dynamodbav:"sk"`
	Label string `dynamodbav:"label,omitempty"`
	N     int    `dynamodbav:"n"`
}

type countJournal = journal.Item[journalMove]

// Bounds of one transaction of new or moved items: the items, the distinct
// counters they move (an apply transaction holds the counters and at least
// one journal item) and their size (DynamoDB allows 100 items, 4 MB).
const (
	maxTxItems    = 50
	maxTxCounters = 40
	maxTxBytes    = 3 << 20
)

// write is one item planned for writing.
type write struct {
	src   Item
	item  map[string]types.AttributeValue
	cond  expression.ConditionBuilder
	moves map[ddb.Key]journalMove
}

// writer is the table one Put writes to.
type writer struct{ t *ddb.Table }

// Put writes items and applies their counter moves through the journal
// partition pk (one per scan, say, so that a retry of the same work
// finds what a crash left).
func Put(ctx context.Context, t *ddb.Table, pk string, items []Item) error {
	x := &writer{t: t}
	// One write per key (the last), as a transaction takes an item once.
	last := map[ddb.Key]int{}
	for n, it := range items {
		last[it.Key] = n
	}
	var pending []Item
	for n, it := range items {
		if last[it.Key] == n {
			pending = append(pending, it)
		}
	}
	var own []ddb.Key
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt == ddb.MaxAttempts {
			return fmt.Errorf("%w: counted write still conflicting after %d attempts", ddb.ErrUnavailable, ddb.MaxAttempts)
		}
		if attempt > 0 {
			if err := ddb.Sleep(ctx, attempt-1); err != nil {
				return err
			}
		}
		keys := make([]ddb.Key, len(pending))
		for n, it := range pending {
			keys[n] = it.Key
		}
		stored, err := x.t.BatchGet(ctx, keys)
		if err != nil {
			return err
		}
		var moving, rewrites []write
		for _, it := range pending {
			w, changed, err := plan(it, stored[it.Key])
			switch {
			case err != nil:
				return err
			case !changed:
			case len(w.moves) == 0:
				rewrites = append(rewrites, w)
			default:
				moving = append(moving, w)
			}
		}
		failed, entries, err := x.writeMoving(ctx, pk, moving)
		if err != nil {
			return err
		}
		own = append(own, entries...)
		again, err := x.rewrite(ctx, rewrites)
		if err != nil {
			return err
		}
		pending = append(failed, again...)
	}
	if len(own) > 0 {
		if err := x.applyCounts(ctx, pk, own); err != nil {
			return err
		}
	}
	return x.applyCounts(ctx, pk, nil)
}

// Settle pays whatever the journal partition pk still holds from writers
// that died: for work that nobody will write again (a scan given up).
func Settle(ctx context.Context, t *ddb.Table, pk string) error {
	return (&writer{t: t}).applyCounts(ctx, pk, nil)
}

// plan is what writing it over old takes; changed is false when old
// is already exactly the item.
func plan(it Item, old map[string]types.AttributeValue) (write, bool, error) {
	v, counts, err := it.Build(old)
	if err != nil {
		return write{}, false, err
	}
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		return write{}, false, fmt.Errorf("marshal item: %w", err)
	}
	refs := make([]string, 0, len(counts))
	labels := map[ddb.Key]string{}
	for _, c := range counts {
		refs = append(refs, c.Key.PK+"|"+c.Key.SK)
		labels[c.Key] = c.Label
	}
	slices.Sort(refs)
	refs = slices.Compact(refs)
	if len(refs) > 0 {
		item[countedAttr] = &types.AttributeValueMemberS{Value: strings.Join(refs, " ")}
	}
	if old != nil && reflect.DeepEqual(old, item) {
		return write{}, false, nil
	}
	w := write{src: it, item: item, moves: map[ddb.Key]journalMove{}}
	move := func(ref string, n int) {
		pk, sk, _ := strings.Cut(ref, "|")
		k := ddb.Key{PK: pk, SK: sk}
		m := w.moves[k]
		m.PK, m.SK, m.Label, m.N = pk, sk, labels[k], m.N+n
		if m.N == 0 {
			delete(w.moves, k)
		} else {
			w.moves[k] = m
		}
	}
	for _, r := range refs {
		move(r, 1)
	}
	attr := expression.Name(countedAttr)
	switch prev, ok := old[countedAttr].(*types.AttributeValueMemberS); {
	case old == nil:
		w.cond = expression.AttributeNotExists(expression.Name(tabledef.PK))
	case !ok:
		w.cond = expression.AttributeExists(expression.Name(tabledef.PK)).And(expression.AttributeNotExists(attr))
	default:
		w.cond = attr.Equal(expression.Value(prev.Value))
		for _, r := range strings.Fields(prev.Value) {
			move(r, -1)
		}
	}
	return w, true, nil
}

// writeMoving writes the items that move counters, in transactions with
// their journal items (concurrently), and returns the items a failed
// condition sent back to be read again and the journal items written.
func (x *writer) writeMoving(ctx context.Context, pk string, ws []write) (failed []Item, entries []ddb.Key, err error) {
	var chunks [][]write
	var chunk []write
	counters, bytes := map[ddb.Key]bool{}, 0
	for _, w := range ws {
		grows := 0
		for k := range w.moves {
			if !counters[k] {
				grows++
			}
		}
		size := avSize(w.item)
		if len(chunk) > 0 && (len(chunk) == maxTxItems || len(counters)+grows > maxTxCounters || bytes+size > maxTxBytes) {
			chunks, chunk, counters, bytes = append(chunks, chunk), nil, map[ddb.Key]bool{}, 0
		}
		chunk = append(chunk, w)
		bytes += size
		for k := range w.moves {
			counters[k] = true
		}
	}
	if len(chunk) > 0 {
		chunks = append(chunks, chunk)
	}
	var mu sync.Mutex
	err = x.t.Parallel(ctx, len(chunks), func(n int) error {
		entry, err := x.writeChunk(ctx, pk, chunks[n])
		mu.Lock()
		defer mu.Unlock()
		switch {
		case errors.Is(err, ddb.ErrConflict):
			for _, w := range chunks[n] {
				failed = append(failed, w.src)
			}
			return nil
		case err != nil:
			return err
		}
		entries = append(entries, entry)
		return nil
	})
	return failed, entries, err
}

// writeChunk writes one transaction: the items and their journal item.
func (x *writer) writeChunk(ctx context.Context, pk string, chunk []write) (ddb.Key, error) {
	j := countJournal{Key: ddb.Key{PK: pk, SK: uuid.NewString()}}
	moves := map[ddb.Key]journalMove{}
	items := make([]types.TransactWriteItem, 0, len(chunk)+1)
	for _, w := range chunk {
		put, err := x.t.TxPut(w.item, &w.cond)
		if err != nil {
			return ddb.Key{}, err
		}
		items = append(items, put)
		for k, m := range w.moves {
			sum := moves[k]
			sum.PK, sum.SK, sum.N = m.PK, m.SK, sum.N+m.N
			if m.Label != "" {
				sum.Label = m.Label
			}
			moves[k] = sum
		}
	}
	for _, m := range moves {
		if m.N != 0 {
			j.Moves = append(j.Moves, m)
		}
	}
	put, err := x.t.TxPutNew(j)
	if err != nil {
		return ddb.Key{}, err
	}
	return j.Key, x.t.Transact(ctx, append(items, put))
}

// rewrite writes items that keep their counters, each conditional
// on still counting where it was read to count; it returns those a
// concurrent writer changed meanwhile.
func (x *writer) rewrite(ctx context.Context, ws []write) ([]Item, error) {
	var mu sync.Mutex
	var failed []Item
	err := x.t.Parallel(ctx, len(ws), func(n int) error {
		err := x.t.PutItem(ctx, ws[n].item, &ws[n].cond)
		if errors.Is(err, ddb.ErrConflict) {
			mu.Lock()
			defer mu.Unlock()
			failed = append(failed, ws[n].src)
			return nil
		}
		return err
	})
	return failed, err
}

// applyCounts applies journal items to their counters: those of keys, or
// with no keys every item of the partition (what crashed writers left).
// A journal item another writer applied meanwhile fails the transaction's
// condition; the items are then read again.
func (x *writer) applyCounts(ctx context.Context, pk string, keys []ddb.Key) error {
	return x.t.Retrying(ctx, func() error {
		var entries []countJournal
		if keys == nil {
			var err error
			if entries, err = journal.Pending[journalMove](ctx, x.t, pk, ""); err != nil {
				return err
			}
		} else {
			got, err := x.t.BatchGet(ctx, keys)
			if err != nil {
				return err
			}
			for _, k := range keys {
				if av, ok := got[k]; ok {
					var e countJournal
					if err := attributevalue.UnmarshalMap(av, &e); err != nil {
						return err
					}
					entries = append(entries, e)
				}
			}
		}
		for len(entries) > 0 {
			sums := map[ddb.Key]journalMove{}
			n := 0
			for ; n < len(entries); n++ {
				grows := 0
				for _, m := range entries[n].Moves {
					if _, ok := sums[ddb.Key{PK: m.PK, SK: m.SK}]; !ok {
						grows++
					}
				}
				if n > 0 && n+1+len(sums)+grows > ddb.MaxTxItems {
					break
				}
				for _, m := range entries[n].Moves {
					k := ddb.Key{PK: m.PK, SK: m.SK}
					sum := sums[k]
					sum.N += m.N
					if m.Label != "" {
						sum.Label = m.Label
					}
					sums[k] = sum
				}
			}
			if err := x.applyEntries(ctx, entries[:n], sums); err != nil {
				return err
			}
			entries = entries[n:]
		}
		return nil
	})
}

// applyEntries adds sums to their counters and pays entries, in one
// transaction.
func (x *writer) applyEntries(ctx context.Context, entries []countJournal, sums map[ddb.Key]journalMove) error {
	items := make([]types.TransactWriteItem, 0, len(entries)+len(sums))
	for k, m := range sums {
		if m.N == 0 {
			continue
		}
		upd := expression.Add(expression.Name("n"), expression.Value(m.N))
		if m.Label != "" {
			upd = upd.Set(expression.Name("label"), expression.Value(m.Label))
		}
		u, err := x.t.TxUpdate(k, upd, nil)
		if err != nil {
			return err
		}
		items = append(items, u)
	}
	paid := make([]ddb.Key, len(entries))
	for n, e := range entries {
		paid[n] = e.Key
	}
	return journal.Pay(ctx, x.t, paid, items)
}

// avSize estimates an item's size as DynamoDB counts it (names and values).
func avSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberM:
		return 3 + avSize(v.Value)
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, e := range v.Value {
			n += len(e)
		}
		return n
	}
	return 1
}
