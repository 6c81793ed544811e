package store

import "context"

// AllIssues reads every SAST issue of a company, so tests can recount the
// group counters from the issues themselves.
func AllIssues(ctx context.Context, s *Store, companyID int64) ([]Issue, error) {
	var out []Issue
	err := s.queryAll(ctx, "", pkBeginsWith(CompanyPK(companyID), "ISSUE#"), true, &out)
	return out, err
}
