package scans

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
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
	// Aliases maps a member of the chunk to the other id its finding
	// answers to: the id it would have had identified by its code rather
	// than its message, or the other way round (see findings/aliases.go).
	Aliases map[string]string `dynamodbav:"aliases,omitempty"`
}

// MemberKeys is the key condition of a scan's membership items inside r.
func MemberKeys(companyID int64, scanID string, r page.Range) expression.KeyConditionBuilder {
	return expression.Key(tabledef.PK).Equal(expression.Value(memberPK(companyID, scanID))).
		And(expression.Key(tabledef.SK).Between(expression.Value(r.From), expression.Value(r.To)))
}

// PutMembers records which issues (ids, sorted in place) the scan
// reported, in place of what an earlier attempt of its ingestion recorded.
// The chunks follow from the ids alone, so a retry that identifies the
// findings alike writes the same items; one that does not (another scan
// of the branch came first and the findings matched other issues) leaves
// chunks keyed by ids it no longer holds, which are deleted once the new
// chunks are written.
func PutMembers(ctx context.Context, t *ddb.Table, companyID int64, scanID string, ids []string, aliases map[string]string) error {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var items []any
	for start := 0; start < len(ids); start += MemberChunk {
		chunk := ids[start:min(start+MemberChunk, len(ids))]
		item := MemberItem{Key: ddb.Key{PK: memberPK(companyID, scanID), SK: memberChunkPrefix + chunk[0]}, Start: start, IDs: chunk}
		for _, id := range chunk {
			if a, ok := aliases[id]; ok {
				if item.Aliases == nil {
					item.Aliases = map[string]string{}
				}
				item.Aliases[id] = a
			}
		}
		items = append(items, item)
	}
	if err := t.BatchPutParallel(ctx, items); err != nil {
		return err
	}
	return dropStaleMembers(ctx, t, companyID, scanID, items)
}

// dropStaleMembers deletes the scan's membership chunks that are not
// among written.
func dropStaleMembers(ctx context.Context, t *ddb.Table, companyID int64, scanID string, written []any) error {
	var stored []ddb.Key
	if err := t.QueryAllConsistent(ctx, MemberKeys(companyID, scanID, page.Prefix(memberChunkPrefix)), &stored); err != nil {
		return err
	}
	keep := map[ddb.Key]bool{}
	for _, it := range written {
		keep[it.(MemberItem).Key] = true
	}
	for _, k := range stored {
		if !keep[k] {
			if err := t.DeleteItem(ctx, k); err != nil && !errors.Is(err, ddb.ErrNotFound) {
				return err
			}
		}
	}
	return nil
}

// MemberIDs are the ids of the issues a scan reported, ascending.
func MemberIDs(ctx context.Context, t *ddb.Table, companyID int64, scanID string) ([]string, error) {
	ids, _, err := Members(ctx, t, companyID, scanID)
	return ids, err
}

// Members are the ids of the issues a scan reported, ascending, and the
// other id each answers to where it has one.
func Members(ctx context.Context, t *ddb.Table, companyID int64, scanID string) ([]string, map[string]string, error) {
	var chunks []MemberItem
	if err := t.QueryAll(ctx, "", MemberKeys(companyID, scanID, page.Prefix(memberChunkPrefix)), true, &chunks); err != nil {
		return nil, nil, err
	}
	var ids []string
	aliases := map[string]string{}
	for _, c := range chunks {
		ids = append(ids, c.IDs...)
		maps.Copy(aliases, c.Aliases)
	}
	return ids, aliases, nil
}
