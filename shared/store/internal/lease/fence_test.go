package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/lease"
)

// Each take makes a new fence: a write checked against it lands while
// its holding lasts and is refused once another take followed, even a
// take under the same owner string (the epoch tells them apart).
func TestFence(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	k := ddb.Key{PK: "C#1", SK: "BRANCH#fenced"}
	write := func(f lease.Fence) error {
		t.Helper()
		check, err := f.Check(tb)
		if err != nil {
			t.Fatal(err)
		}
		put, err := tb.TxUpdate(ddb.Key{PK: "C#1", SK: "WRITE"}, expression.Add(expression.Name("n"), expression.Value(1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		return tb.Transact(ctx, []types.TransactWriteItem{put, check})
	}
	var h head
	tb.Now = at(t0)
	first, err := lease.TakeFenced(ctx, tb, k, "same", &h)
	if err != nil || first.Epoch != 1 || first.Owner != "same" || first.Key != k {
		t.Fatalf("first take: %+v %v", first, err)
	}
	if err := write(first); err != nil {
		t.Fatalf("a write under the lease: %v", err)
	}
	tb.Now = at(t0.Add(lease.For + time.Second))
	second, err := lease.TakeFenced(ctx, tb, k, "same", &h)
	if err != nil || second.Epoch != 2 || h.Owner != "same" {
		t.Fatalf("a take after the lease ran out: %+v %+v %v", second, h, err)
	}
	if err := write(first); !errors.Is(err, ddb.ErrConflict) || !ddb.ConditionFailedAt(err, 1) {
		t.Fatalf("a write under the first holding, after the second take: %v", err)
	}
	if err := write(second); err != nil {
		t.Fatalf("a write under the second holding: %v", err)
	}
	lease.Release(ctx, tb, k, "same", false)
	if err := write(second); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("a write after the release: %v", err)
	}
	if third, err := lease.TakeFenced(ctx, tb, k, "other", &h); err != nil || third.Epoch != 3 {
		t.Fatalf("a take after the release (the epoch stays): %+v %v", third, err)
	}
}
