// Package baselines reads what a CI gate compares a scan with: the
// findings open on another branch's latest complete scan of the same
// tool (docs/findings.md). It reads by key and by one scan's membership, never the
// company's issues.
package baselines

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
)

// Baselines reads baselines from the store's table.
type Baselines struct{ t *ddb.Table }

// New returns the baselines of table t.
func New(t *ddb.Table) *Baselines { return &Baselines{t: t} }

// Open is what a branch's latest complete scan of a tool has open among
// the fingerprints asked for.
type Open struct {
	// ScanID is that scan, "" when the branch has no complete scan of the
	// tool (then Fingerprints is empty).
	ScanID string
	// Fingerprints are those of the asked-for findings the scan reported
	// and whose issue on the branch is unresolved (open or fix_in_progress:
	// still in the code, and nobody dismissed it).
	Fingerprints map[string]bool
}

// unresolved are the statuses that count as open on a baseline.
var unresolved = map[string]bool{"open": true, "fix_in_progress": true}

type head struct {
	ScanID string `dynamodbav:"scan_id"`
}

type members struct {
	IDs []string `dynamodbav:"ids"`
}

type issue struct {
	Fingerprint string `dynamodbav:"fingerprint"`
	Status      string `dynamodbav:"status"`
}

// BaselineOpen reads, of the findings of tool with fingerprints, those
// open on the latest complete scan of tool on branch of a project: the
// branch's head for the tool names the scan; a query of that scan's
// membership (some 40 bytes an issue) says which of the findings it
// reported, and only those issues are read, by key, for their status.
func (b *Baselines) BaselineOpen(ctx context.Context, companyID, projectID int64, branch, tool string, fingerprints []string) (Open, error) {
	out := Open{Fingerprints: map[string]bool{}}
	var h head
	switch err := b.t.GetItem(ctx, schema.HeadKey(companyID, projectID, branch, tool), &h); {
	case errors.Is(err, ddb.ErrNotFound):
		return out, nil
	case err != nil:
		return out, err
	case h.ScanID == "": // its first scan is being applied
		return out, nil
	}
	out.ScanID = h.ScanID
	var chunks []members
	kc := ddb.PKBeginsWith(schema.MemberPK(companyID, h.ScanID), schema.MemberChunkPrefix)
	if err := b.t.QueryAll(ctx, "", kc, true, &chunks); err != nil {
		return out, err
	}
	reported := map[string]bool{}
	for _, c := range chunks {
		for _, id := range c.IDs {
			reported[id] = true
		}
	}
	var keys []ddb.Key
	asked := map[string]bool{}
	for _, fp := range fingerprints {
		id := schema.IssueID(companyID, projectID, branch, tool, fp)
		if fp != "" && reported[id] && !asked[id] {
			asked[id] = true
			keys = append(keys, schema.IssueKey(companyID, id))
		}
	}
	got, err := b.t.ReadBatch(ctx, keys, false)
	if err != nil {
		return out, err
	}
	for _, av := range got {
		var i issue
		if err := attributevalue.UnmarshalMap(av, &i); err != nil {
			return out, err
		}
		if unresolved[i.Status] {
			out.Fingerprints[i.Fingerprint] = true
		}
	}
	return out, nil
}
