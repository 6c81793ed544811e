package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/tabledef"
)

// PageRequest asks for one page of a list: the page after Token when set,
// else the page after the first Offset items.
type PageRequest struct {
	Size   int
	Token  string
	Offset int
}

// prefixRange is the sort key range of every key starting with prefix (see
// skPrefix for why a range rather than begins_with).
func prefixRange(prefix string) skRange { return skRange{From: prefix, To: prefix + "\U0010FFFF"} }

// queryRange reads one page of p's partition inside r into out and returns
// the token of the next page ("" when there is none).
func (s *Store) queryRange(ctx context.Context, p Page, r skRange, out any) (string, error) {
	start, err := decodeKeyToken(p.Token, p.PKAttr, p.Partition)
	if err != nil {
		return "", err
	}
	if start != nil && !r.holds(start[p.skAttr()]) {
		return "", ErrBadPageToken // another list's token in the same partition
	}
	items, last, err := s.t.QueryRaw(ctx, p.Index, p.keyCondition(r), nil, p.Forward, p.Limit, start)
	if start != nil && err != nil {
		err = badStart(err)
	}
	if err != nil {
		return "", err
	}
	if err := attributevalue.UnmarshalListOfMaps(items, out); err != nil {
		return "", err
	}
	return encodeKeyToken(last)
}

// readPage reads one page of p's partition inside r into out: from p.Token
// when set, else after the first offset items, which it skips with a
// keys-only read (what a page reached by number costs beyond the page).
func (s *Store) readPage(ctx context.Context, p Page, r skRange, offset int, out any) (string, error) {
	if p.Token == "" && offset > 0 {
		token, ok, err := s.skipKeys(ctx, p, r, offset)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", attributevalue.UnmarshalListOfMaps(nil, out)
		}
		p.Token = token
	}
	return s.queryRange(ctx, p, r, out)
}

// skipKeys reads, keys only, the first offset items of p's partition inside
// r and returns the token that continues after them; ok is false when fewer
// items exist.
func (s *Store) skipKeys(ctx context.Context, p Page, r skRange, offset int) (token string, ok bool, err error) {
	names := expression.NamesList(expression.Name(tabledef.PK), expression.Name(tabledef.SK))
	if p.Index != "" {
		names = names.AddNames(expression.Name(p.PKAttr), expression.Name(p.skAttr()))
	}
	expr, err := expression.NewBuilder().WithKeyCondition(p.keyCondition(r)).WithProjection(names).Build()
	if err != nil {
		return "", false, err
	}
	var start map[string]types.AttributeValue
	for offset > 0 {
		in := &dynamodb.QueryInput{
			TableName: aws.String(s.t.Name), KeyConditionExpression: expr.KeyCondition(),
			ProjectionExpression:     expr.Projection(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ScanIndexForward: aws.Bool(p.Forward), ExclusiveStartKey: start,
			Limit: aws.Int32(int32(min(offset, 1000))), ReturnConsumedCapacity: ddb.Total,
		}
		if p.Index != "" {
			in.IndexName = aws.String(p.Index)
		}
		res, err := ddb.Call(func() (*dynamodb.QueryOutput, error) { return s.t.DB.Query(ctx, in) })
		if err != nil {
			return "", false, fmt.Errorf("query keys: %w", err)
		}
		ddb.Record(ctx, ddb.Reading, res.ConsumedCapacity)
		offset -= len(res.Items)
		if res.LastEvaluatedKey == nil {
			if offset > 0 {
				return "", false, nil
			}
			// Exactly offset items exist: continue after the last one.
			token, err = encodeKeyToken(keyOf(res.Items[len(res.Items)-1], p))
			return token, err == nil, err
		}
		start = res.LastEvaluatedKey
	}
	token, err = encodeKeyToken(start)
	return token, err == nil, err
}

// keyOf is an item's key attributes as a LastEvaluatedKey of p's query.
func keyOf(item map[string]types.AttributeValue, p Page) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{tabledef.PK: item[tabledef.PK], tabledef.SK: item[tabledef.SK]}
	if p.Index != "" {
		out[p.PKAttr], out[p.skAttr()] = item[p.PKAttr], item[p.skAttr()]
	}
	return out
}

// digitKeys is every sort key that starts with a digit (ids, times).
var digitKeys = skRange{From: "0", To: ":"}

// holds reports whether v is a string sort key inside r.
func (r skRange) holds(v types.AttributeValue) bool {
	s, ok := v.(*types.AttributeValueMemberS)
	return ok && s.Value >= r.From && s.Value <= r.To
}
