package issuelists

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// GetIssue reads a SAST issue of a company.
func (x *Lists) GetIssue(ctx context.Context, companyID int64, id string) (findings.Issue, error) {
	cid, ok := schema.CanonicalUUID(id)
	if !ok {
		return findings.Issue{}, ddb.ErrNotFound
	}
	var i findings.Issue
	err := x.t.GetItem(ctx, schema.IssueKey(companyID, cid), &i)
	return i, err
}

// EachIssue calls fn with every SAST issue of a company, page by page. It
// reads them all, so it is for exports, checks and benchmarks, never for a
// request path.
func (x *Lists) EachIssue(ctx context.Context, companyID int64, fn func(findings.Issue) error) error {
	for shard := range 256 {
		if err := ddb.Each(ctx, x.t, ddb.PKBeginsWith(schema.IssueShardPK(companyID, fmt.Sprintf("%02x", shard)), ""), fn); err != nil {
			return err
		}
	}
	return nil
}

// ScanHeadsOf reads the heads of a branch and tool that name a scan: the
// latest scan of each upload category (the uncategorised one's included),
// newest first; none before its first scan.
func (x *Lists) ScanHeadsOf(ctx context.Context, companyID, projectID int64, branch, tool string) ([]findings.ScanHead, error) {
	base := schema.HeadKey(companyID, projectID, branch, tool)
	var heads []findings.ScanHead
	if err := x.t.QueryAll(ctx, "", ddb.PKBeginsWith(base.PK, base.SK), true, &heads); err != nil {
		return nil, err
	}
	heads = slices.DeleteFunc(heads, func(h findings.ScanHead) bool { return h.ScanID == "" })
	slices.SortStableFunc(heads, func(a, b findings.ScanHead) int { return strings.Compare(b.ScanCreatedAt, a.ScanCreatedAt) })
	return heads, nil
}

// EachScanIssue calls fn with every issue a scan of the company reported,
// in issue id order; ErrNotFound when the company has no such scan.
func (x *Lists) EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(findings.Issue) error) error {
	if _, err := x.scans.GetScan(ctx, companyID, scanID); err != nil {
		return err
	}
	ids, err := scans.MemberIDs(ctx, x.t, companyID, scanID)
	if err != nil {
		return err
	}
	for start := 0; start < len(ids); start += 100 {
		page := ids[start:min(start+100, len(ids))]
		got, err := findings.ByID(ctx, x.f, companyID, page)
		if err != nil {
			return err
		}
		for _, id := range page {
			if i, ok := got[id]; ok {
				if err := fn(i); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
