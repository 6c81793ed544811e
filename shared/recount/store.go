package recount

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/trends"
)

// Store is what the recount check read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	BranchProjects(ctx context.Context, companyID int64, branch string) ([]int64, error)
	EachIssue(ctx context.Context, companyID int64, fn func(store.Issue) error) error
	EachQualityIssue(ctx context.Context, companyID int64, fn func(store.QualityIssue) error) error
	EachSCAIssue(ctx context.Context, companyID int64, fn func(store.SCAIssue) error) error
	GroupsPage(ctx context.Context, companyID int64, sc store.Scope, dim store.Dimension, offset, limit int) ([]store.GroupCount, int64, error)
	ListProjects(ctx context.Context, companyID int64) ([]store.Project, error)
	ListSCAIssues(ctx context.Context, companyID, projectID int64, q store.PageQuery) ([]store.SCAIssue, store.PageResult, int, error)
	ListScans(ctx context.Context, companyID int64, q store.ScanQuery) (store.ScanPage, error)
	ProjectQualityIssues(ctx context.Context, companyID, projectID int64, q store.PageQuery) ([]store.QualityIssue, store.PageResult, int, error)
	QualityClasses(ctx context.Context, companyID int64, scanID string) ([]store.QualityClass, error)
	ScanSCAIssues(ctx context.Context, companyID int64, scanID string, q store.PageQuery) ([]store.SCAIssue, store.PageResult, int, error)
	Snapshot(ctx context.Context, companyID, projectID int64, first string) (trends.Snapshot, error)
	ScopeGroups(ctx context.Context, companyID int64, sc store.Scope, dim store.Dimension) ([]store.GroupCount, error)
}
