package findings

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/trends"
)

// The issue write path for the areas that change issues on top of this
// one (triage, the loaders). They are functions, not methods, so the
// facade that embeds Findings does not offer them to handlers.

// Commit writes changes through the issue write path (see commitIssues).
func Commit(ctx context.Context, f *Findings, companyID int64, changes []IssueChange, first ...types.TransactWriteItem) (int, error) {
	return f.commitIssues(ctx, companyID, changes, first...)
}

// SettleTerms gives changes the acceptance terms their write will give
// them (see settleTerms): a decision's item takes its issue's.
func SettleTerms(ctx context.Context, f *Findings, companyID int64, changes []IssueChange, at string) error {
	return f.settleTerms(ctx, companyID, changes, at)
}

// Settle settles the counters of keys after a write (see settleCounters).
func Settle(ctx context.Context, f *Findings, companyID int64, keys []ddb.Key) error {
	return f.settleCounters(ctx, companyID, keys)
}

// Consistent reads an issue's latest version (see consistentIssue).
func Consistent(ctx context.Context, f *Findings, companyID int64, id string) (Issue, error) {
	return f.consistentIssue(ctx, companyID, id)
}

// ByID reads issues by id with consistent reads (see issuesByID).
func ByID(ctx context.Context, f *Findings, companyID int64, ids []string) (map[string]Issue, error) {
	return f.issuesByID(ctx, companyID, ids)
}

// ProjectBranches are the branches of a project that have (or had) issues
// (see projectBranches).
func ProjectBranches(ctx context.Context, f *Findings, companyID, projectID int64) ([]string, error) {
	return f.projectBranches(ctx, companyID, projectID)
}

// TrendMoves are the trend moves of changes written at at (see
// trendMovesAt).
func TrendMoves(ctx context.Context, f *Findings, companyID int64, changes []IssueChange, at string) ([]trends.Move, error) {
	return f.trendMovesAt(ctx, companyID, changes, at)
}
