// Package baselines reads what a CI gate compares a scan with: the
// findings open on another branch's latest complete scan of the same
// tool (docs/findings.md). It reads by key and by one scan's membership, never the
// company's issues.
package baselines

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
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
	ScanID        string `dynamodbav:"scan_id"`
	ScanCreatedAt string `dynamodbav:"scan_created_at"`
}

type members struct {
	IDs []string `dynamodbav:"ids"`
}

type issue struct {
	Fingerprint string `dynamodbav:"fingerprint"`
	Status      string `dynamodbav:"status"`
}

// BaselineOpen reads, of the findings of tool with fingerprints, those
// open on the latest complete scans of tool on branch of a project (one
// per upload category; a branch scanned without categories has one): the
// branch's heads for the tool name the scans; a query of each scan's
// membership (some 40 bytes an issue) says which of the findings it
// reported, and only those issues are read, by key, for their status.
// ScanID is the latest of the scans.
func (b *Baselines) BaselineOpen(ctx context.Context, companyID, projectID int64, branch, tool string, fingerprints []string) (Open, error) {
	out := Open{Fingerprints: map[string]bool{}}
	// Every upload category's head of the tool (schema.CategoryHeadKey:
	// the empty category's is the first): a finding is open on the
	// branch when any category's latest scan reported it.
	var heads []head
	base := schema.HeadKey(companyID, projectID, branch, tool)
	if err := b.t.QueryAll(ctx, "", ddb.PKBeginsWith(base.PK, base.SK), true, &heads); err != nil {
		return out, err
	}
	reported := map[string]bool{}
	latest := ""
	for _, h := range heads {
		if h.ScanID == "" { // its first scan is being applied
			continue
		}
		if out.ScanID == "" || h.ScanCreatedAt > latest {
			out.ScanID, latest = h.ScanID, h.ScanCreatedAt
		}
		var chunks []members
		kc := ddb.PKBeginsWith(schema.MemberPK(companyID, h.ScanID), schema.MemberChunkPrefix)
		if err := b.t.QueryAll(ctx, "", kc, true, &chunks); err != nil {
			return out, err
		}
		for _, c := range chunks {
			for _, id := range c.IDs {
				reported[id] = true
			}
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
