package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/lease"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type head struct {
	ddb.Key
	Owner string `dynamodbav:"lease_owner"`
	Until int64  `dynamodbav:"lease_until"`
	Value int    `dynamodbav:"value"`
}

// at is a clock standing at t.
func at(t time.Time) func() time.Time { return func() time.Time { return t } }

// passing is a clock that moves step forward at every reading from t, as
// time passes while a taker waits for the lease (without waiting).
func passing(t time.Time, step time.Duration) func() time.Time {
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

// readings is a clock that reads ts in turn, then the last one.
func readings(ts ...time.Time) func() time.Time {
	return func() time.Time {
		t := ts[0]
		if len(ts) > 1 {
			ts = ts[1:]
		}
		return t
	}
}

// One holder at a time: a second taker waits up to Wait and is refused
// (ErrBusy) while the lease runs, takes the item once it has run out and
// reads it as the first holder left it; a release by an owner that lost
// the lease changes nothing; a release frees the item at once, a cut-off
// release only after Grace.
func TestOneHolderAtATime(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	k := ddb.Key{PK: "C#1", SK: "BRANCH#main"}
	get := func() head {
		t.Helper()
		var h head
		if err := tb.GetItemConsistent(ctx, k, &h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	tb.Now = at(t0)
	var h head
	if err := lease.Take(ctx, tb, k, "first", &h); err != nil || h.Owner != "" {
		t.Fatalf("first take: %+v %v", h, err)
	}
	if err := tb.Update(ctx, k, expression.Set(expression.Name("value"), expression.Value(7)), nil, nil); err != nil {
		t.Fatal(err)
	}
	tb.Now = passing(t0, lease.Wait/2+time.Second)
	if err := lease.Take(ctx, tb, k, "second", &h); !errors.Is(err, lease.ErrBusy) {
		t.Fatalf("a second taker while the lease runs: %v", err)
	}
	if got := get(); got.Owner != "first" || got.Until != t0.Add(lease.For).UnixMilli() {
		t.Fatalf("after a refused take: %+v", got)
	}
	later := t0.Add(lease.For + time.Second)
	tb.Now = at(later)
	if err := lease.Take(ctx, tb, k, "second", &h); err != nil || h.Owner != "first" || h.Value != 7 {
		t.Fatalf("a take after the lease ran out: %+v %v", h, err)
	}
	lease.Release(ctx, tb, k, "first", false)
	if got := get(); got.Owner != "second" || got.Until != later.Add(lease.For).UnixMilli() {
		t.Fatalf("a release by the owner that lost the lease: %+v", got)
	}
	lease.Release(ctx, tb, k, "second", false)
	if err := lease.Take(ctx, tb, k, "third", &h); err != nil {
		t.Fatalf("a take after a release: %v", err)
	}
	lease.Release(ctx, tb, k, "third", true)
	if got := get(); got.Owner != "third" || got.Until != later.Add(lease.Grace).UnixMilli() {
		t.Fatalf("a cut-off release: %+v", got)
	}
	tb.Now = readings(later, later.Add(time.Second), later.Add(lease.Wait+time.Second))
	if err := lease.Take(ctx, tb, k, "fourth", &h); !errors.Is(err, lease.ErrBusy) {
		t.Fatalf("a take during Grace: %v", err)
	}
	tb.Now = at(later.Add(lease.Grace + time.Millisecond))
	if err := lease.Take(ctx, tb, k, "fourth", &h); err != nil || h.Owner != "third" {
		t.Fatalf("a take after Grace: %+v %v", h, err)
	}
}

// A take sets what the holder makes known (Attr) in the write that takes
// the item, and a refused take sets nothing.
func TestTakeSetsAlso(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	k := ddb.Key{PK: "C#1", SK: "BRANCH#also"}
	tb.Now = at(t0)
	var h head
	if err := lease.Take(ctx, tb, k, "first", &h, lease.Attr{Name: "value", Value: 3}); err != nil {
		t.Fatal(err)
	}
	tb.Now = passing(t0, lease.Wait/2+time.Second)
	if err := lease.Take(ctx, tb, k, "second", &h, lease.Attr{Name: "value", Value: 4}); !errors.Is(err, lease.ErrBusy) {
		t.Fatalf("a second taker while the lease runs: %v", err)
	}
	var got head
	if err := tb.GetItemConsistent(ctx, k, &got); err != nil {
		t.Fatal(err)
	}
	if got.Owner != "first" || got.Value != 3 {
		t.Fatalf("after a take with an attribute and a refused one: %+v", got)
	}
}
