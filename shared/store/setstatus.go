package store

import "context"

// SetIssueStatus changes an issue's status (a change by no one in
// particular: the demo seed and tests); UpdateIssue is the API's.
func (s *Store) SetIssueStatus(ctx context.Context, companyID int64, id, status string) (Issue, error) {
	return s.UpdateIssue(ctx, companyID, id, IssueUpdate{Status: &status}, Actor{})
}
