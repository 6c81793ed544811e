// Package page is the one way the store cuts a list into pages. A List
// describes the list (a partition of the table or of an index, a sort key
// range, a filter, an order); a Request asks for Limit items after a token
// or after the first Offset items; ReadPage answers the items, the page's
// position and the next page's token, which is sealed for the list (see
// token.go). A page reached by number costs the page plus a keys-only read
// of what it skips (Skip); a page after a token costs the page.
package page

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Item is one item as DynamoDB returns it.
type Item = map[string]types.AttributeValue

// Range is an inclusive sort key range; the zero Range is the whole
// partition.
type Range struct{ From, To string }

// Prefix is the range of every sort key starting with p (see ddb.SKPrefix).
func Prefix(p string) Range {
	if p == "" {
		return Range{}
	}
	return Range{From: p, To: p + "\U0010FFFF"}
}

// Digits is the range of every sort key that starts with a digit (ids,
// times).
var Digits = Range{From: "0", To: ":"}

func (r Range) holds(sk string) bool { return r == Range{} || sk >= r.From && sk <= r.To }

// List is one ordered collection: the items of a partition of the table
// or of an index, inside a sort key range, that match a filter.
type List struct {
	Index     tabledef.Index // zero for the table itself
	Partition string         // partition key value; starts with the company's partition
	Range     Range
	// Filter narrows the list beyond its keys: DynamoDB reads and drops
	// what does not match, so a filtered page costs what it reads to find
	// its matches. Name the filter in View so tokens stay with it.
	Filter  *expression.ConditionBuilder
	Forward bool
	// OffsetPartition is the list's partition in the Offset index, whose
	// items mirror the list's sort keys (OffsetSK = the item's sort key in
	// the list): Skip then reads ~100 bytes per item skipped, whatever the
	// items' size. Without one (or with a filter) Skip reads the list.
	OffsetPartition string
	// View names what the list shows beyond its keys (a filter, a view of
	// the same range), so that a token opens only the view it came from.
	View string
}

func (l List) pkAttr() string {
	if l.Index.Name == "" {
		return tabledef.PK
	}
	return l.Index.PK
}

func (l List) skAttr() string {
	if l.Index.Name == "" {
		return tabledef.SK
	}
	return l.Index.SK
}

// keyAttrs are the attributes of a start key of the list's query, sorted.
func (l List) keyAttrs() []string {
	if l.Index.Name == "" {
		return []string{tabledef.PK, tabledef.SK}
	}
	out := []string{tabledef.PK, tabledef.SK, l.Index.PK, l.Index.SK}
	slices.Sort(out)
	return out
}

func (l List) keyCondition() expression.KeyConditionBuilder {
	kc := expression.Key(l.pkAttr()).Equal(expression.Value(l.Partition))
	if l.Range != (Range{}) {
		kc = kc.And(expression.Key(l.skAttr()).Between(expression.Value(l.Range.From), expression.Value(l.Range.To)))
	}
	return kc
}

// Request asks for one page: Limit items after Token when it is set (a
// token the list gave with the page before), else after the first Offset.
type Request struct {
	Limit  int
	Token  string
	Offset int
}

// Result is where a page read by ReadItems lies (a Page without its
// items; Of joins them).
type Result struct {
	// Offset is the position of the page's first item in the list.
	Offset int
	// Next is the token of the following page; "" when no item follows.
	Next string
}

// ReadItems reads one page of l as the raw items (ReadPage answers them
// as a Page of the list's type). It reads one match more than
// the page, so a next token is given exactly when an item follows.
func ReadItems(ctx context.Context, t *ddb.Table, l List, r Request) ([]Item, Result, error) {
	res := Result{Offset: r.Offset}
	var start Start
	switch {
	case r.Token != "":
		c, err := l.Open(r.Token)
		if err != nil {
			return nil, Result{}, err
		}
		start, res.Offset = c.Start(), c.Offset
	case r.Offset > 0:
		var ok bool
		var err error
		if start, ok, err = Skip(ctx, t, l, r.Offset); err != nil || !ok {
			return nil, res, err
		}
	}
	if r.Limit <= 0 {
		return nil, res, nil
	}
	items, err := Collect(ctx, t, l, start, r.Limit+1)
	if err != nil {
		return nil, Result{}, err
	}
	if len(items) > r.Limit {
		items = items[:r.Limit]
		if res.Next, err = l.TokenAfter(items[len(items)-1], res.Offset+r.Limit); err != nil {
			return nil, Result{}, err
		}
	}
	return items, res, nil
}

// Start is where a read of a list begins: its first item (the zero
// Start), or after a key that a token or Skip gave.
type Start struct {
	key Item
	// client marks a key that came from a token: DynamoDB refusing it is
	// the client's error (ErrBadToken), not the service's.
	client bool
}

// maxRead bounds one Query request.
const maxRead = 1000

// Collect reads up to n matches of l from start, following DynamoDB's
// pages as needed (n may be math.MaxInt for all of them).
func Collect(ctx context.Context, t *ddb.Table, l List, start Start, n int) ([]Item, error) {
	var out []Item
	from := start.key
	for first := true; len(out) < n; first = false {
		limit := int32(min(n-len(out), maxRead))
		if l.Filter != nil {
			limit = max(limit, 100) // Limit counts items before the filter
		}
		items, next, err := t.QueryRaw(ctx, l.Index.Name, l.keyCondition(), l.Filter, l.Forward, limit, from)
		if err != nil && first && start.client {
			err = badStart(err)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, items[:min(len(items), n-len(out))]...)
		if next == nil {
			break
		}
		from = next
	}
	return out, nil
}

// badStart is the error of a query whose start key came from a token:
// DynamoDB refusing the start key (attributes missing or extra, a key
// outside the query's range: an edited token's, the checksum being no
// secret) is ErrBadToken.
func badStart(err error) error {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "ValidationException" {
		return ErrBadToken
	}
	return err
}

// Skip returns the start after the first n matches of l; ok is false when
// l has fewer. It reads keys only: from the Offset index when the list has
// a partition there and no filter (~100 bytes an item); else from the list
// itself with a keys-only projection, which DynamoDB charges at the size
// of the items read (fine for small items and for filtered lists, whose
// filter needs the items).
func Skip(ctx context.Context, t *ddb.Table, l List, n int) (Start, bool, error) {
	viaOffset := l.OffsetPartition != "" && l.Filter == nil
	index, b := tabledef.Offset.Name, expression.NewBuilder()
	if viaOffset {
		kc := expression.Key(tabledef.Offset.PK).Equal(expression.Value(l.OffsetPartition))
		if l.Range != (Range{}) {
			kc = kc.And(expression.Key(tabledef.Offset.SK).Between(expression.Value(l.Range.From), expression.Value(l.Range.To)))
		}
		b = b.WithKeyCondition(kc)
	} else {
		index = l.Index.Name
		attrs := l.keyAttrs()
		names := expression.NamesList(expression.Name(attrs[0]))
		for _, a := range attrs[1:] {
			names = names.AddNames(expression.Name(a))
		}
		b = b.WithKeyCondition(l.keyCondition()).WithProjection(names)
		if l.Filter != nil {
			b = b.WithFilter(*l.Filter)
		}
	}
	expr, err := b.Build()
	if err != nil {
		return Start{}, false, err
	}
	var from, last Item
	for left := n; left > 0; {
		in := &dynamodb.QueryInput{
			TableName: aws.String(t.Name), KeyConditionExpression: expr.KeyCondition(),
			ProjectionExpression: expr.Projection(), FilterExpression: expr.Filter(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ScanIndexForward: aws.Bool(l.Forward), ExclusiveStartKey: from, ReturnConsumedCapacity: ddb.Total,
		}
		if l.Filter == nil || viaOffset {
			in.Limit = aws.Int32(int32(min(left, maxRead)))
		}
		if index != "" {
			in.IndexName = aws.String(index)
		}
		res, err := ddb.Call(func() (*dynamodb.QueryOutput, error) { return t.DB.Query(ctx, in) })
		if err != nil {
			return Start{}, false, fmt.Errorf("skip query: %w", err)
		}
		ddb.Record(ctx, ddb.Reading, res.ConsumedCapacity)
		got := res.Items[:min(len(res.Items), left)]
		left -= len(got)
		if len(got) > 0 {
			last = got[len(got)-1]
		}
		if left > 0 && res.LastEvaluatedKey == nil {
			return Start{}, false, nil
		}
		from = res.LastEvaluatedKey
	}
	if last == nil {
		return Start{}, false, nil
	}
	key := Item{tabledef.PK: last[tabledef.PK], tabledef.SK: last[tabledef.SK]}
	if viaOffset {
		key[l.pkAttr()] = &types.AttributeValueMemberS{Value: l.Partition}
		key[l.skAttr()] = last[tabledef.Offset.SK]
		return Start{key: key}, true, nil
	}
	for _, a := range l.keyAttrs() {
		key[a] = last[a]
	}
	return Start{key: key}, true, nil
}

// Count is the number of matches of l: a COUNT query (ddb.Table.Count),
// every page of it. It returns no items, but DynamoDB charges it for every
// item it reads (a filtered list's, all of its range): it is for small
// items only.
func Count(ctx context.Context, t *ddb.Table, l List) (int64, error) {
	return t.Count(ctx, l.Index.Name, l.keyCondition(), l.Filter)
}
