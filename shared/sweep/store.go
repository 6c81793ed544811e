package sweep

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/store"
)

// Store is what the stalled-scan sweep read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	ClearStalled(ctx context.Context, st store.StalledScan) error
	FailScan(ctx context.Context, companyID int64, scanID, reason string, problems []store.ScanError, ev *store.Event) (bool, error)
	GetProject(ctx context.Context, companyID, projectID int64) (store.Project, error)
	GetScan(ctx context.Context, companyID int64, scanID string) (store.Scan, error)
	StalledScans(ctx context.Context, before time.Time, limit int) ([]store.StalledScan, error)
}
