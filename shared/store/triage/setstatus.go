package triage

import (
	"context"

	"github.com/acme/codescan-api/shared/store/findings"
)

// SetIssueStatus changes an issue's status (a change by no one in
// particular: the demo seed and tests); UpdateIssue is the API's.
func (x *Triage) SetIssueStatus(ctx context.Context, companyID int64, id, status string) (findings.Issue, error) {
	return x.UpdateIssue(ctx, companyID, id, IssueUpdate{Status: &status}, findings.Actor{})
}
