package journal_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/journal"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type move struct {
	Counter string `dynamodbav:"counter"`
	N       int    `dynamodbav:"n"`
}

// Journal items are written in chunks, read back until paid, and each is
// paid exactly once: a second payment of an item already paid fails and
// moves nothing.
func TestEachItemIsPaidOnce(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	ctx := context.Background()
	const pk, prefix = "C#1#JOURNAL#scan-1", "J#"
	var moves []move
	for n := range 7 {
		moves = append(moves, move{Counter: "COUNTER#x", N: n + 1})
	}
	chunks := journal.Chunks(pk, prefix, moves, 3, 0)
	if len(chunks) != 3 || len(chunks[2].Moves) != 1 || chunks[1].SK != prefix+"000001" {
		t.Fatalf("chunks %+v", chunks)
	}
	for _, c := range chunks {
		if err := tb.PutItem(ctx, c, nil); err != nil {
			t.Fatal(err)
		}
	}
	pending, err := journal.Pending[move](ctx, tb, pk, prefix)
	if err != nil || len(pending) != 3 || pending[0].Moves[2].N != 3 {
		t.Fatalf("pending %+v %v", pending, err)
	}
	counter := ddb.Key{PK: "C#1", SK: "COUNTER#x"}
	pay := func(it journal.Item[move]) error {
		sum := 0
		for _, m := range it.Moves {
			sum += m.N
		}
		add, err := tb.TxUpdate(counter, expression.Add(expression.Name("n"), expression.Value(sum)), nil)
		if err != nil {
			t.Fatal(err)
		}
		return journal.Pay(ctx, tb, []ddb.Key{it.Key}, []types.TransactWriteItem{add})
	}
	if err := pay(pending[0]); err != nil {
		t.Fatal(err)
	}
	if err := pay(pending[0]); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("a second payment of the same item: %v", err)
	}
	for _, it := range pending[1:] {
		if err := pay(it); err != nil {
			t.Fatal(err)
		}
	}
	var c struct {
		N int `dynamodbav:"n"`
	}
	if err := tb.GetItemConsistent(ctx, counter, &c); err != nil || c.N != 28 {
		t.Fatalf("the counter: %d %v, want 1+...+7 = 28", c.N, err)
	}
	if left, err := journal.Pending[move](ctx, tb, pk, prefix); err != nil || len(left) != 0 {
		t.Fatalf("left %+v %v", left, err)
	}
}
