package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Window is one page of a key range read from a cursor or a page number:
// the opaque Token of the page before (tenant-bound: it must name
// Partition) or, without one, Offset items from the start. With a Filter,
// DynamoDB reads and discards what does not match, so a filtered page costs
// what it has to read to find Take matches.
type Window struct {
	Index     tabledef.Index // zero for the table itself
	Partition string
	SKPrefix  string
	Filter    *expression.ConditionBuilder
	Forward   bool
	Token     string
	Offset    int
	Take      int
}

func (w Window) pkAttr() string {
	if w.Index.Name == "" {
		return tabledef.PK
	}
	return w.Index.PK
}

func (w Window) skAttr() string {
	if w.Index.Name == "" {
		return tabledef.SK
	}
	return w.Index.SK
}

// window reads one page and returns its raw items and the token of the
// next page ("" at the end). It reads Take+1 matches to know whether a next
// page exists; the token is the last returned item's key.
func (s *Store) window(ctx context.Context, w Window) ([]map[string]types.AttributeValue, string, error) {
	start, err := decodeKeyToken(w.Token, w.pkAttr(), w.Partition)
	if err != nil {
		return nil, "", err
	}
	if w.Token != "" {
		w.Offset = 0
	}
	kc := expression.Key(w.pkAttr()).Equal(expression.Value(w.Partition))
	if w.SKPrefix != "" {
		kc = kc.And(ddb.SKPrefix(w.skAttr(), w.SKPrefix))
	}
	want := w.Take + 1
	var out []map[string]types.AttributeValue
	fromToken := start != nil // the first query's start key is the client's
	for len(out) < want {
		limit := int32(min(w.Offset+want-len(out), maxPageItems))
		if w.Filter != nil {
			limit = max(limit, 100) // Limit counts items before the filter
		}
		items, next, err := s.t.QueryRaw(ctx, w.Index.Name, kc, w.Filter, w.Forward, limit, start)
		if fromToken && err != nil {
			err = badStart(err)
		}
		if err != nil {
			return nil, "", err
		}
		fromToken = false
		for _, it := range items {
			switch {
			case w.Offset > 0:
				w.Offset--
			case len(out) < want:
				out = append(out, it)
			}
		}
		if next == nil {
			break
		}
		start = next
	}
	if len(out) <= w.Take {
		return out, "", nil
	}
	out = out[:w.Take]
	if len(out) == 0 {
		return out, "", nil
	}
	last := map[string]types.AttributeValue{}
	for _, a := range []string{tabledef.PK, tabledef.SK, w.Index.PK, w.Index.SK} {
		if v, ok := out[len(out)-1][a]; ok {
			last[a] = v
		}
	}
	token, err := encodeKeyToken(last)
	return out, token, err
}
