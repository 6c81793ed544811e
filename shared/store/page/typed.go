package page

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// Page is one page of a list, what every paged list read of the store
// answers: the page's items (never nil), the position of its first item in
// the list, the next page's token ("" when no item follows) and the
// list's total where the list is counted. Total is nil for a list that
// keeps no count (a filtered view, a log): its total would cost a read of
// the whole list, so the answer says only whether a page follows.
type Page[T any] struct {
	Items  []T
	Offset int
	Next   string
	Total  *int64
}

// Counted is p with the list's total n.
func (p Page[T]) Counted(n int64) Page[T] {
	p.Total = &n
	return p
}

// Count is the list's total; 0 for an uncounted list.
func (p Page[T]) Count() int64 {
	if p.Total == nil {
		return 0
	}
	return *p.Total
}

// Of is the page of items read at res.
func Of[T any](items []T, res Result) Page[T] {
	if items == nil {
		items = []T{}
	}
	return Page[T]{Items: items, Offset: res.Offset, Next: res.Next}
}

// Map is p with each item turned by f (a stored item into what the area
// answers).
func Map[T, U any](p Page[T], f func(T) U) Page[U] {
	out := Page[U]{Items: make([]U, len(p.Items)), Offset: p.Offset, Next: p.Next, Total: p.Total}
	for n, it := range p.Items {
		out.Items[n] = f(it)
	}
	return out
}

// ReadPage reads one page of l as items of T (see ReadItems).
func ReadPage[T any](ctx context.Context, t *ddb.Table, l List, r Request) (Page[T], error) {
	items, res, err := ReadItems(ctx, t, l, r)
	if err != nil {
		return Page[T]{}, err
	}
	var out []T
	if err := attributevalue.UnmarshalListOfMaps(items, &out); err != nil {
		return Page[T]{}, err
	}
	return Of(out, res), nil
}
