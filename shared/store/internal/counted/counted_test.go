package counted_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/internal/journal"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type finding struct {
	ddb.Key
	Name string `dynamodbav:"name"`
}

type counter struct {
	N     int    `dynamodbav:"n"`
	Label string `dynamodbav:"label"`
}

var (
	counterA = ddb.Key{PK: "C#1", SK: "COUNTER#a"}
	counterB = ddb.Key{PK: "C#1", SK: "COUNTER#b"}
)

// items are n findings counted in the counters in returns for each.
func items(n int, in func(k int) []counted.Ref) []counted.Item {
	out := make([]counted.Item, n)
	for k := range n {
		key := ddb.Key{PK: "C#1#FINDINGS", SK: fmt.Sprintf("F#%04d", k)}
		out[k] = counted.Item{Key: key, Build: func(map[string]types.AttributeValue) (any, []counted.Ref, error) {
			return finding{Key: key, Name: fmt.Sprint(k)}, in(k), nil
		}}
	}
	return out
}

func value(t *testing.T, tb *ddb.Table, k ddb.Key) counter {
	t.Helper()
	var c counter
	if err := tb.GetItemConsistent(context.Background(), k, &c); err != nil {
		t.Fatalf("counter %s: %v", k.SK, err)
	}
	return c
}

// Counted writes keep their counters exact: new items count once however
// often and however concurrently they are written again, a moved item
// leaves its old counter for its new one, a label lands on its counter,
// and no journal item is left to pay.
func TestCountersStayExact(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	ctx := context.Background()
	const pk = "C#1#JOURNAL#scan-1"
	first := items(120, func(k int) []counted.Ref {
		refs := []counted.Ref{{Key: counterA}}
		if k%3 == 0 {
			refs = append(refs, counted.Ref{Key: counterB, Label: "b"})
		}
		return refs
	})
	if err := counted.Put(ctx, tb, pk, first); err != nil {
		t.Fatal(err)
	}
	if a, b := value(t, tb, counterA), value(t, tb, counterB); a.N != 120 || b.N != 40 || b.Label != "b" {
		t.Fatalf("after the first write: a %+v b %+v", a, b)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := counted.Put(ctx, tb, pk, first); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if a, b := value(t, tb, counterA), value(t, tb, counterB); a.N != 120 || b.N != 40 {
		t.Fatalf("after four concurrent rewrites: a %d b %d", a.N, b.N)
	}
	// The first 30 move to B alone.
	moved := items(30, func(int) []counted.Ref { return []counted.Ref{{Key: counterB}} })
	if err := counted.Put(ctx, tb, pk, moved); err != nil {
		t.Fatal(err)
	}
	if a, b := value(t, tb, counterA), value(t, tb, counterB); a.N != 90 || b.N != 30+30 {
		t.Fatalf("after the move: a %d b %d, want 90 and 60", a.N, b.N)
	}
	if err := counted.Settle(ctx, tb, pk); err != nil {
		t.Fatal(err)
	}
	left, err := journal.Pending[map[string]any](ctx, tb, pk, "")
	if err != nil || len(left) != 0 {
		t.Fatalf("journal items left: %d %v", len(left), err)
	}
}
