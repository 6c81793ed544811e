package issuelists

import (
	"context"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

// IssueHistory returns an issue's status changes, oldest first;
// ErrNotFound when the company has no such issue.
func (x *Lists) IssueHistory(ctx context.Context, companyID int64, issueID string) ([]findings.HistoryEntry, error) {
	id, ok := schema.CanonicalUUID(issueID)
	if !ok {
		return nil, ddb.ErrNotFound
	}
	var i findings.Issue
	if err := x.t.GetItem(ctx, schema.IssueKey(companyID, id), &i); err != nil {
		return nil, err
	}
	out := []findings.HistoryEntry{}
	err := x.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.HistoryPK(companyID, id), ""), true, &out)
	return out, err
}
