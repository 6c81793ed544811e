package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/tabledef"
)

// ErrBadPageToken is returned for a page token that this list did not issue
// (another list's, another company's, or an edited one).
var ErrBadPageToken = errors.New("invalid page token")

// List is one ordered collection of a company: the items of a partition of
// the table or of an index, optionally narrowed to a sort-key prefix. Every
// item of a list that is read by page number also carries the Offset index's
// keys: OffsetPK = OffsetPartition and OffsetSK = the item's sort key in the list.
type List struct {
	Index     tabledef.Index // zero for the table itself
	Partition string         // partition key value; starts with CompanyPK
	SKPrefix  string         // optional sort key prefix
	SKFrom    string         // optional lowest sort key (not with SKPrefix)
	Forward   bool
	// OffsetPartition is the list's partition in the Offset index; without
	// one, a page by number reads the items before it (see offsetStart).
	OffsetPartition string
	// View names a narrowing of the list beyond its keys (a filter), so
	// that a token opens only the view it was issued for.
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

// keyAttrs are the attributes of a LastEvaluatedKey of the list's query.
func (l List) keyAttrs() []string {
	out := []string{tabledef.PK, tabledef.SK}
	if l.Index.Name != "" {
		out = append(out, l.Index.PK, l.Index.SK)
	}
	slices.Sort(out)
	return out
}

func (l List) keyCondition() expression.KeyConditionBuilder {
	kc := expression.Key(l.pkAttr()).Equal(expression.Value(l.Partition))
	if l.SKPrefix != "" {
		kc = kc.And(ddb.SKPrefix(l.skAttr(), l.SKPrefix))
	} else if l.SKFrom != "" {
		kc = kc.And(expression.Key(l.skAttr()).GreaterThanEqual(expression.Value(l.SKFrom)))
	}
	return kc
}

// id names the list inside a token's checksum, so a token of one list never
// opens another.
func (l List) id() string {
	parts := []string{l.Index.Name, l.Partition, l.SKPrefix, l.OffsetPartition}
	if l.SKFrom != "" {
		parts = append(parts, "from:"+l.SKFrom)
	}
	if l.View != "" {
		parts = append(parts, l.View)
	}
	return strings.Join(parts, "\x00")
}

// OffsetKeys are the Offset index attributes a list item carries.
type OffsetKeys struct {
	OffsetPK string `dynamodbav:"OffsetPK,omitempty"`
	OffsetSK string `dynamodbav:"OffsetSK,omitempty"`
}

// PageQuery asks for one page of a list: after Token when it is set
// (a cursor from the previous page), else after the first Offset items.
type PageQuery struct {
	Limit  int
	Token  string
	Offset int
}

// PageResult describes the page read.
type PageResult struct {
	// Offset is the position of the page's first item in the list.
	Offset int
	// Next is the token of the following page, "" on the last page.
	Next string
}

// cursor is a token's content: the last key read and the position after it.
type cursor struct {
	Key    map[string]string `json:"k"`
	Offset int               `json:"o"`
}

// encodeToken seals a cursor for l: base64url(JSON) "." base64url(checksum).
// The checksum (over the list and the JSON) makes every edit detectable; a
// token is still no secret, and the decoder's checks, not the checksum, are
// what keep a token inside its list and company.
func encodeToken(l List, c cursor) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(tokenSum(l, b)), nil
}

func tokenSum(l List, b []byte) []byte { return checksum(l.id(), b) }

// checksum is the 12-byte SHA-256 of id, a 0 byte and b: what binds a
// token to what it was issued for.
func checksum(id string, b []byte) []byte {
	h := sha256.New()
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write(b)
	return h.Sum(nil)[:12]
}

// maxTokenLength bounds what is decoded (keys are at most 2 KB + 1 KB).
const maxTokenLength = 8192

// decodeToken reverses encodeToken and checks that the cursor is one of l's:
// exactly the key attributes of l's query, its partition, a sort key inside
// l's prefix, a position that can be.
func decodeToken(l List, token string) (cursor, error) {
	data, sum, ok := strings.Cut(token, ".")
	if !ok || len(token) > maxTokenLength {
		return cursor{}, ErrBadPageToken
	}
	b, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil {
		return cursor{}, ErrBadPageToken
	}
	got, err := base64.RawURLEncoding.DecodeString(sum)
	if err != nil || !bytes.Equal(got, tokenSum(l, b)) {
		return cursor{}, ErrBadPageToken
	}
	var c cursor
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || c.Offset < 1 {
		return cursor{}, ErrBadPageToken
	}
	if !slices.Equal(slices.Sorted(maps.Keys(c.Key)), l.keyAttrs()) ||
		c.Key[l.pkAttr()] != l.Partition || !strings.HasPrefix(c.Key[l.skAttr()], l.SKPrefix) || c.Key[l.skAttr()] < l.SKFrom {
		return cursor{}, ErrBadPageToken
	}
	return c, nil
}

func plainKey(last map[string]types.AttributeValue) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range last {
		s, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			return nil, errors.New("non-string key attribute " + k)
		}
		out[k] = s.Value
	}
	return out, nil
}

func attrKey(plain map[string]string) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{}
	for k, v := range plain {
		out[k] = &types.AttributeValueMemberS{Value: v}
	}
	return out
}

// queryPage reads one page of l into out (a pointer to a slice). A page
// after a token costs the page; a page by number first reads the keys of
// the items before it from the Offset index (see offsetStart), then the page.
func (s *Store) queryPage(ctx context.Context, l List, q PageQuery, out any) (PageResult, error) {
	var start map[string]types.AttributeValue
	res := PageResult{Offset: q.Offset}
	switch {
	case q.Token != "":
		c, err := decodeToken(l, q.Token)
		if err != nil {
			return PageResult{}, err
		}
		start, res.Offset = attrKey(c.Key), c.Offset
	case q.Offset > 0:
		var err error
		start, err = s.offsetStart(ctx, l, q.Offset)
		if err != nil {
			return PageResult{}, err
		}
		if start == nil { // fewer items than the offset: an empty page
			return res, attributevalue.UnmarshalListOfMaps(nil, out)
		}
	}
	items, last, err := s.t.QueryRaw(ctx, l.Index.Name, l.keyCondition(), nil, l.Forward, int32(q.Limit), start)
	if q.Token != "" && err != nil {
		err = badStart(err) // a forged cursor (the checksum is no secret)
	}
	if err != nil {
		return PageResult{}, err
	}
	if err := attributevalue.UnmarshalListOfMaps(items, out); err != nil {
		return PageResult{}, err
	}
	// A full page may be the last one: DynamoDB still returns its key. The
	// following (empty) page then ends the walk; callers that know the
	// total can tell beforehand.
	if last != nil && len(items) == q.Limit {
		plain, err := plainKey(last)
		if err != nil {
			return PageResult{}, err
		}
		if res.Next, err = encodeToken(l, cursor{Key: plain, Offset: res.Offset + len(items)}); err != nil {
			return PageResult{}, err
		}
	}
	return res, nil
}

// offsetStart returns the exclusive start key of l's query after its first n
// items (nil when l has at most n items). It reads keys only from the
// Offset index when l has a partition there; else it reads l itself, which
// DynamoDB charges at the full size of the items skipped (fine for small
// items, such as membership items, and for a list whose items keep their
// one Offset partition for another list of theirs). The Offset sort key
// mirrors the list's sort key, so the last skipped item's keys, with the
// list's own key attributes filled in from them, are a valid start key for
// the list's query.
func (s *Store) offsetStart(ctx context.Context, l List, n int) (map[string]types.AttributeValue, error) {
	index, kc := tabledef.Offset.Name, expression.Key(tabledef.Offset.PK).Equal(expression.Value(l.OffsetPartition))
	b := expression.NewBuilder()
	if l.OffsetPartition == "" {
		index, kc = l.Index.Name, l.keyCondition()
		attrs := l.keyAttrs()
		names := expression.NamesList(expression.Name(attrs[0]))
		for _, a := range attrs[1:] {
			names = names.AddNames(expression.Name(a))
		}
		b = b.WithProjection(names)
	}
	expr, err := b.WithKeyCondition(kc).Build()
	if err != nil {
		return nil, err
	}
	var start, lastItem map[string]types.AttributeValue
	for left := n; left > 0; {
		in := &dynamodb.QueryInput{
			TableName: aws.String(s.t.Name), KeyConditionExpression: expr.KeyCondition(),
			ProjectionExpression: expr.Projection(), ExpressionAttributeNames: expr.Names(),
			ExpressionAttributeValues: expr.Values(), ScanIndexForward: aws.Bool(l.Forward),
			Limit: aws.Int32(int32(min(left, maxPageItems))), ExclusiveStartKey: start, ReturnConsumedCapacity: ddb.Total,
		}
		if index != "" {
			in.IndexName = aws.String(index)
		}
		res, err := ddb.Call(func() (*dynamodb.QueryOutput, error) { return s.t.DB.Query(ctx, in) })
		if err != nil {
			return nil, fmt.Errorf("skip query: %w", err)
		}
		ddb.Record(ctx, ddb.Reading, res.ConsumedCapacity)
		left -= len(res.Items)
		if len(res.Items) > 0 {
			lastItem = res.Items[len(res.Items)-1]
		}
		if res.LastEvaluatedKey == nil {
			if left > 0 {
				return nil, nil
			}
			break
		}
		start = res.LastEvaluatedKey
	}
	if lastItem == nil {
		return nil, nil
	}
	key := map[string]types.AttributeValue{tabledef.PK: lastItem[tabledef.PK], tabledef.SK: lastItem[tabledef.SK]}
	if l.OffsetPartition == "" {
		for _, a := range l.keyAttrs() {
			key[a] = lastItem[a]
		}
		return key, nil
	}
	key[l.pkAttr()] = &types.AttributeValueMemberS{Value: l.Partition}
	key[l.skAttr()] = lastItem[tabledef.Offset.SK]
	return key, nil
}
