package findings

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/tabledef"
)

// A scan's reported issues (its membership) are its issue ids in
// ascending order, stored in chunks of memberChunk ids: one item per chunk,
// keyed by its first id and holding its position in the list. Ingestion
// writes a chunk where it would write memberChunk items (each a stream
// record too), a page of the scan's list reads one or two chunks, and
// "did the scan report this issue" is one query for the chunk that would
// hold the id.

// memberChunk is the most ids a membership item holds (some 10 KB).
const memberChunk = 256

// memberChunkPrefix starts the sort key of every membership item.
const memberChunkPrefix = schema.MemberChunkPrefix

// memberPK is the partition of a scan's membership items.
func memberPK(companyID int64, scanID string) string { return schema.MemberPK(companyID, scanID) }

// memberItem is one chunk of a scan's issue ids.
type memberItem struct {
	ddb.Key
	Start int      `dynamodbav:"start"` // position of IDs[0] in the scan's list
	IDs   []string `dynamodbav:"ids"`
}

// memberKeys is the key condition of a scan's membership items inside r.
func memberKeys(companyID int64, scanID string, r page.Range) expression.KeyConditionBuilder {
	return expression.Key(tabledef.PK).Equal(expression.Value(memberPK(companyID, scanID))).
		And(expression.Key(tabledef.SK).Between(expression.Value(r.From), expression.Value(r.To)))
}

// memberList is the list a scan issue page token is bound to.
func memberList(companyID int64, scanID string) page.List {
	return page.List{Partition: memberPK(companyID, scanID), Range: page.Prefix(memberChunkPrefix), Forward: true}
}

// putMembers records which issues the scan reported. The chunks follow
// from the ids alone, so writing them again (a retried ingestion) writes
// the same items.
func (x *Findings) putMembers(ctx context.Context, companyID int64, scanID string, found []Issue) error {
	ids := IDs(found)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var items []any
	for start := 0; start < len(ids); start += memberChunk {
		chunk := ids[start:min(start+memberChunk, len(ids))]
		items = append(items, memberItem{Key: ddb.Key{PK: memberPK(companyID, scanID), SK: memberChunkPrefix + chunk[0]},
			Start: start, IDs: chunk})
	}
	return x.t.BatchPutParallel(ctx, items)
}

// memberIDs are the ids of the issues a scan reported, ascending.
func (x *Findings) memberIDs(ctx context.Context, companyID int64, scanID string) ([]string, error) {
	var chunks []memberItem
	if err := x.t.QueryAll(ctx, "", memberKeys(companyID, scanID, page.Prefix(memberChunkPrefix)), true, &chunks); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range chunks {
		out = append(out, c.IDs...)
	}
	return out, nil
}

// memberWindow returns the ids at positions [offset, offset+limit) of a
// scan's list, reading chunks from the one whose sort key is from
// (inclusive; "" for the first), and the sort key of the chunk holding the
// position after them ("" when the list ends there). From the first chunk
// it reads every chunk before the window; from a page token's chunk, one
// or two.
func (x *Findings) memberWindow(ctx context.Context, companyID int64, scanID, from string, offset, limit int) ([]string, string, error) {
	r, batch := page.Prefix(memberChunkPrefix), int32(3)
	if from != "" {
		r.From = from
	} else {
		batch = int32(min((offset+limit)/memberChunk+2, 100))
	}
	kc := memberKeys(companyID, scanID, r)
	end := offset + limit
	ids := []string{}
	var start map[string]types.AttributeValue
	for {
		items, last, err := x.t.QueryRaw(ctx, "", kc, nil, true, batch, start)
		if err != nil {
			return nil, "", err
		}
		for _, it := range items {
			var c memberItem
			if err := attributevalue.UnmarshalMap(it, &c); err != nil {
				return nil, "", err
			}
			switch {
			case c.Start+len(c.IDs) <= offset: // before the window
				continue
			case c.Start >= end: // the next page starts here
				return ids, c.SK, nil
			}
			hi := min(end-c.Start, len(c.IDs))
			ids = append(ids, c.IDs[max(offset-c.Start, 0):hi]...)
			if hi < len(c.IDs) {
				return ids, c.SK, nil
			}
		}
		if last == nil {
			return ids, "", nil
		}
		start = last
	}
}

// maxSortKey is DynamoDB's bound on a sort key value: a longer one in a
// key condition is refused.
const maxSortKey = 1024

// ScanIssues reads one page of the issues a scan reported (in issue id
// order) and how many it reported: the membership chunks of the page (by
// number, also those before it), then the page's issues by key.
func (x *Findings) ScanIssues(ctx context.Context, companyID int64, sc scans.Scan, q page.Request) ([]Issue, page.Result, int, error) {
	l := memberList(companyID, sc.ID)
	from, offset := "", q.Offset
	if q.Token != "" {
		c, err := l.Open(q.Token)
		if err != nil {
			return nil, page.Result{}, 0, err
		}
		if from, offset = c.Key[tabledef.SK], c.Offset; len(from) > maxSortKey {
			return nil, page.Result{}, 0, page.ErrBadToken
		}
	}
	ids, next, err := x.memberWindow(ctx, companyID, sc.ID, from, offset, q.Limit)
	if err != nil {
		return nil, page.Result{}, 0, err
	}
	res := page.Result{Offset: offset}
	if next != "" {
		key := map[string]string{tabledef.PK: l.Partition, tabledef.SK: next}
		if res.Next, err = l.Seal(page.Cursor{Key: key, Offset: offset + len(ids)}); err != nil {
			return nil, page.Result{}, 0, err
		}
	}
	got, err := x.issuesByID(ctx, companyID, ids)
	if err != nil {
		return nil, page.Result{}, 0, err
	}
	out := make([]Issue, 0, len(ids))
	for _, id := range ids {
		if i, ok := got[id]; ok {
			out = append(out, i)
		}
	}
	return out, res, sc.Findings, nil
}

// ScanReported reports whether a scan of the company reported an issue:
// it reads the one chunk that would hold the id.
func (x *Findings) ScanReported(ctx context.Context, companyID int64, scanID, issueID string) (bool, error) {
	kc := memberKeys(companyID, scanID, page.Range{From: memberChunkPrefix, To: memberChunkPrefix + issueID})
	items, _, err := x.t.QueryRaw(ctx, "", kc, nil, false, 1, nil)
	if err != nil || len(items) == 0 {
		return false, err
	}
	var c memberItem
	if err := attributevalue.UnmarshalMap(items[0], &c); err != nil {
		return false, err
	}
	_, found := slices.BinarySearch(c.IDs, issueID)
	return found, nil
}
