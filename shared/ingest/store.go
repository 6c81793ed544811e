package ingest

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
)

// Store is what the scan write of a parsed report read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	ApplyScan(ctx context.Context, companyID int64, sc store.Scan, found []store.Issue) (store.ApplyResult, error)
	PutQualityIssues(ctx context.Context, companyID int64, issues []store.QualityIssue) error
	PutScanSCAIssues(ctx context.Context, companyID int64, sc store.Scan, found []store.SCAIssue) error
}
