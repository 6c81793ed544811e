package issuelists

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// memberList is the list a scan issue page token is bound to.
func memberList(companyID int64, scanID string) page.List {
	return page.List{Partition: schema.MemberPK(companyID, scanID), Range: page.Prefix(schema.MemberChunkPrefix), Forward: true}
}

// memberWindow returns the ids at positions [offset, offset+limit) of a
// scan's list, reading chunks from the one whose sort key is from
// (inclusive; "" for the first), and the sort key of the chunk holding the
// position after them ("" when the list ends there). From the first chunk
// it reads every chunk before the window; from a page token's chunk, one
// or two.
func (x *Lists) memberWindow(ctx context.Context, companyID int64, scanID, from string, offset, limit int) ([]string, string, error) {
	r, batch := page.Prefix(schema.MemberChunkPrefix), int32(3)
	if from != "" {
		r.From = from
	} else {
		batch = int32(min((offset+limit)/scans.MemberChunk+2, 100))
	}
	kc := scans.MemberKeys(companyID, scanID, r)
	end := offset + limit
	ids := []string{}
	var start map[string]types.AttributeValue
	for {
		items, last, err := x.t.QueryRaw(ctx, "", kc, nil, true, batch, start)
		if err != nil {
			return nil, "", err
		}
		for _, it := range items {
			var c scans.MemberItem
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

// ListScanIssues reads one page of the issues a scan reported (in issue id
// order) and how many it reported: the membership chunks of the page (by
// number, also those before it), then the page's issues by key.
func (x *Lists) ListScanIssues(ctx context.Context, companyID int64, sc scans.Scan, q page.Request) (page.Page[findings.Issue], error) {
	l := memberList(companyID, sc.ID)
	from, offset := "", q.Offset
	if q.Token != "" {
		c, err := l.Open(q.Token)
		if err != nil {
			return page.Page[findings.Issue]{}, err
		}
		if from, offset = c.Key[tabledef.SK], c.Offset; len(from) > maxSortKey {
			return page.Page[findings.Issue]{}, page.ErrBadToken
		}
	}
	ids, next, err := x.memberWindow(ctx, companyID, sc.ID, from, offset, q.Limit)
	if err != nil {
		return page.Page[findings.Issue]{}, err
	}
	res := page.Result{Offset: offset}
	if next != "" {
		key := map[string]string{tabledef.PK: l.Partition, tabledef.SK: next}
		if res.Next, err = l.Seal(page.Cursor{Key: key, Offset: offset + len(ids)}); err != nil {
			return page.Page[findings.Issue]{}, err
		}
	}
	got, err := findings.ByID(ctx, x.f, companyID, ids)
	if err != nil {
		return page.Page[findings.Issue]{}, err
	}
	out := make([]findings.Issue, 0, len(ids))
	for _, id := range ids {
		if i, ok := got[id]; ok {
			out = append(out, i)
		}
	}
	return page.Of(out, res).Counted(int64(sc.Findings)), nil
}

// ScanReported reports whether a scan of the company reported an issue:
// it reads the one chunk that would hold the id.
func (x *Lists) ScanReported(ctx context.Context, companyID int64, scanID, issueID string) (bool, error) {
	kc := scans.MemberKeys(companyID, scanID, page.Range{From: schema.MemberChunkPrefix, To: schema.MemberChunkPrefix + issueID})
	items, _, err := x.t.QueryRaw(ctx, "", kc, nil, false, 1, nil)
	if err != nil || len(items) == 0 {
		return false, err
	}
	var c scans.MemberItem
	if err := attributevalue.UnmarshalMap(items[0], &c); err != nil {
		return false, err
	}
	_, found := slices.BinarySearch(c.IDs, issueID)
	return found, nil
}
