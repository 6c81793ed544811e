package exportjob

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
)

// Store is what the worker reads and writes: the store methods it calls,
// and no others.
type Store interface {
	StartExport(ctx context.Context, companyID int64, id string, maxAttempts int) (store.Export, bool, error)
	ExportProgress(ctx context.Context, companyID int64, id string, attempt int, read, expected int64) error
	FinishExport(ctx context.Context, companyID int64, id string, attempt int, r store.ExportResult) error
	FailExport(ctx context.Context, companyID int64, id, reason string) error
	ListIssues(ctx context.Context, companyID int64, f store.IssueFilter, q store.PageQuery) ([]store.Issue, store.PageResult, int64, error)
	ListSCAIssues(ctx context.Context, companyID, projectID int64, q store.PageQuery) ([]store.SCAIssue, store.PageResult, int, error)
}
