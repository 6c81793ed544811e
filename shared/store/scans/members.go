package scans

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/tabledef"
)

// A scan's reported issues (its membership) are its issue ids in
// ascending order, stored in chunks of MemberChunk ids: one item per chunk,
// keyed by its first id and holding its position in the list. Ingestion
// writes a chunk where it would write MemberChunk items (each a stream
// record too), a page of the scan's list reads one or two chunks, and
// "did the scan report this issue" is one query for the chunk that would
// hold the id.

// MemberChunk is the most ids a membership item holds (some 10 KB).
const MemberChunk = 256

// memberChunkPrefix starts the sort key of every membership item.
const memberChunkPrefix = schema.MemberChunkPrefix

// memberPK is the partition of a scan's membership items.
func memberPK(companyID int64, scanID string) string { return schema.MemberPK(companyID, scanID) }

// MemberItem is one chunk of a scan's issue ids.
type MemberItem struct {
	ddb.Key
	Start int      `dynamodbav:"start"` // position of IDs[0] in the scan's list
	IDs   []string `dynamodbav:"ids"`
}

// MemberKeys is the key condition of a scan's membership items inside r.
func MemberKeys(companyID int64, scanID string, r page.Range) expression.KeyConditionBuilder {
	return expression.Key(tabledef.PK).Equal(expression.Value(memberPK(companyID, scanID))).
		And(expression.Key(tabledef.SK).Between(expression.Value(r.From), expression.Value(r.To)))
}

// PutMembers records which issues (ids, sorted in place) the scan
// reported. The chunks follow from the ids alone, so writing them again (a
// retried ingestion) writes the same items.
func PutMembers(ctx context.Context, t *ddb.Table, companyID int64, scanID string, ids []string) error {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var items []any
	for start := 0; start < len(ids); start += MemberChunk {
		chunk := ids[start:min(start+MemberChunk, len(ids))]
		items = append(items, MemberItem{Key: ddb.Key{PK: memberPK(companyID, scanID), SK: memberChunkPrefix + chunk[0]},
			Start: start, IDs: chunk})
	}
	return t.BatchPutParallel(ctx, items)
}

// MemberIDs are the ids of the issues a scan reported, ascending.
func MemberIDs(ctx context.Context, t *ddb.Table, companyID int64, scanID string) ([]string, error) {
	var chunks []MemberItem
	if err := t.QueryAll(ctx, "", MemberKeys(companyID, scanID, page.Prefix(memberChunkPrefix)), true, &chunks); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range chunks {
		out = append(out, c.IDs...)
	}
	return out, nil
}
