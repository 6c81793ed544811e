package ddb_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type thing struct {
	ddb.Key
	Name string `dynamodbav:"name"`
	N    int    `dynamodbav:"n"`
}

func newTable(t *testing.T) *ddb.Table {
	t.Helper()
	return ddb.New(testenv.Table(t))
}

// The table's calls answer the store's sentinel errors: a missing item is
// ErrNotFound (read or updated), a failed condition ErrConflict (put,
// update, transaction, with the failing item's index), a transaction past
// DynamoDB's 100 items is refused before it is sent, and so is a key past
// DynamoDB's limits (KeyTooLongError); what failed wrote nothing.
func TestSentinelErrors(t *testing.T) {
	t.Parallel()
	tb := newTable(t)
	ctx := context.Background()
	k := ddb.Key{PK: "C#1", SK: "THING#1"}
	var got thing
	if err := tb.GetItem(ctx, k, &got); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("a missing item: %v", err)
	}
	set := expression.Set(expression.Name("n"), expression.Value(2))
	if err := tb.Update(ctx, k, set, nil, nil); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("an update of a missing item: %v", err)
	}
	if err := tb.PutNew(ctx, thing{Key: k, Name: "one", N: 1}); err != nil {
		t.Fatal(err)
	}
	if err := tb.PutNew(ctx, thing{Key: k, Name: "again"}); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("a second new item: %v", err)
	}
	other := expression.Name("name").Equal(expression.Value("other"))
	if err := tb.Update(ctx, k, set, &other, nil); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("a failed extra condition: %v", err)
	}
	var after thing
	if err := tb.Update(ctx, k, set, nil, &after); err != nil || after.N != 2 || after.Name != "one" {
		t.Fatalf("update: %+v %v", after, err)
	}
	put, _ := tb.TxPut(thing{Key: ddb.Key{PK: "C#1", SK: "THING#2"}, Name: "two"}, nil)
	dup, _ := tb.TxPutNew(thing{Key: k, Name: "dup"})
	err := tb.Transact(ctx, []types.TransactWriteItem{put, dup})
	if !errors.Is(err, ddb.ErrConflict) || !ddb.ConditionFailedAt(err, 1) || ddb.ConditionFailedAt(err, 0) {
		t.Fatalf("a transaction whose second item fails: %v", err)
	}
	if err := tb.GetItem(ctx, ddb.Key{PK: "C#1", SK: "THING#2"}, &got); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("a failed transaction wrote its first item: %v", err)
	}
	many := make([]types.TransactWriteItem, ddb.MaxTxItems+1)
	for n := range many {
		many[n], _ = tb.TxPut(thing{Key: ddb.Key{PK: "C#1", SK: "MANY#" + strings.Repeat("x", n%3) + string(rune('a'+n%26))}}, nil)
	}
	if err := tb.Transact(ctx, many); err == nil || errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("a transaction of %d items: %v", len(many), err)
	}
	long := ddb.Key{PK: "C#1", SK: strings.Repeat("s", ddb.MaxSortKeyBytes+1)}
	var tooLong *ddb.KeyTooLongError
	if err := tb.GetItem(ctx, long, &got); !errors.As(err, &tooLong) || tooLong.Max != ddb.MaxSortKeyBytes {
		t.Fatalf("a sort key past the limit: %v", err)
	}
	if err := tb.PutItem(ctx, thing{Key: ddb.Key{PK: strings.Repeat("p", ddb.MaxPartitionKeyBytes+1), SK: "x"}}, nil); !errors.As(err, &tooLong) || tooLong.Max != ddb.MaxPartitionKeyBytes {
		t.Fatalf("a partition key past the limit: %v", err)
	}
}

// A meter in the context adds up the requests and consumed capacity of
// every call made with it, and only those.
func TestMeterAddsUpCalls(t *testing.T) {
	t.Parallel()
	tb := newTable(t)
	var m ddb.Meter
	ctx := ddb.WithMeter(context.Background(), &m)
	k := ddb.Key{PK: "C#1", SK: "THING#1"}
	if err := tb.PutItem(ctx, thing{Key: k, Name: "one"}, nil); err != nil {
		t.Fatal(err)
	}
	var got thing
	if err := tb.GetItemConsistent(ctx, k, &got); err != nil {
		t.Fatal(err)
	}
	if err := tb.GetItem(context.Background(), k, &got); err != nil { // unmetered
		t.Fatal(err)
	}
	if req, rcu, wcu := m.Snapshot(); req != 2 || rcu <= 0 || wcu <= 0 {
		t.Fatalf("requests %d rcu %.1f wcu %.1f", req, rcu, wcu)
	}
}

// Retrying runs a write again while it meets conflicts, and gives up
// with ErrUnavailable past its budget; other errors end it at once.
func TestRetryingConflicts(t *testing.T) {
	t.Parallel()
	tb := newTable(t)
	ctx := context.Background()
	var calls atomic.Int32
	err := tb.Retrying(ctx, func() error {
		if calls.Add(1) < 3 {
			return ddb.ErrConflict
		}
		return nil
	})
	if err != nil || calls.Load() != 3 {
		t.Fatalf("after two conflicts: %v, %d calls", err, calls.Load())
	}
	calls.Store(0)
	if err := tb.Retrying(ctx, func() error { calls.Add(1); return ddb.ErrConflict }); !errors.Is(err, ddb.ErrUnavailable) || calls.Load() != ddb.MaxAttempts {
		t.Fatalf("endless conflicts: %v, %d calls", err, calls.Load())
	}
	calls.Store(0)
	boom := errors.New("boom")
	if err := tb.Retrying(ctx, func() error { calls.Add(1); return boom }); !errors.Is(err, boom) || calls.Load() != 1 {
		t.Fatalf("another error: %v, %d calls", err, calls.Load())
	}
	if !ddb.Transient(ddb.ErrUnavailable) || ddb.Transient(ddb.ErrConflict) || !ddb.Transient(context.DeadlineExceeded) {
		t.Fatal("Transient")
	}
}

// The table's clock stamps in UTC at second precision, sortable stamps
// at microseconds with a fixed width, and Tick never repeats itself.
func TestClock(t *testing.T) {
	t.Parallel()
	tb := &ddb.Table{Name: "t"}
	at := time.Date(2026, 11, 27, 10, 0, 0, 5000, time.FixedZone("X", 3600))
	tb.Now = func() time.Time { return at }
	if tb.Stamp() != "2026-11-27T09:00:00Z" || tb.StampSortable() != "2026-11-27T09:00:00.000005Z" {
		t.Fatalf("stamps %s %s", tb.Stamp(), tb.StampSortable())
	}
	if a, b := tb.Tick(), tb.Tick(); !b.After(a) {
		t.Fatalf("ticks %v %v", a, b)
	}
}
