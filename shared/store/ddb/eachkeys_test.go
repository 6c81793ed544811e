package ddb_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/tabledef"
)

// EachKeys hands the keys a query selects in order, a page at a time,
// never an empty page, and stops at fn's first error.
func TestEachKeysPagesInOrder(t *testing.T) {
	t.Parallel()
	tb := newTable(t)
	ctx := context.Background()
	var want []ddb.Key
	for n := range 5 {
		k := ddb.Key{PK: "C#7", SK: fmt.Sprintf("THING#%d", n)}
		if err := tb.PutItem(ctx, thing{Key: k, Name: "t"}, nil); err != nil {
			t.Fatal(err)
		}
		want = append(want, k)
	}
	kc := expression.Key(tabledef.PK).Equal(expression.Value("C#7"))
	var got []ddb.Key
	var sizes []int
	err := tb.EachKeys(ctx, "", kc, 2, func(keys []ddb.Key) error {
		sizes = append(sizes, len(keys))
		got = append(got, keys...)
		return nil
	})
	if err != nil || !slices.Equal(got, want) || !slices.Equal(sizes, []int{2, 2, 1}) {
		t.Fatalf("EachKeys: %v pages %v, %v; want %v", got, sizes, err, want)
	}
	stop := errors.New("stop")
	calls := 0
	err = tb.EachKeys(ctx, "", kc, 2, func([]ddb.Key) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("fn's error: %v after %d calls; want stop after 1", err, calls)
	}
	none := expression.Key(tabledef.PK).Equal(expression.Value("C#8"))
	if err := tb.EachKeys(ctx, "", none, 2, func([]ddb.Key) error { t.Fatal("called with no keys"); return nil }); err != nil {
		t.Fatal(err)
	}
}
