package ingester

import (
	"context"

	"github.com/acme/codescan-api/shared/bulktriage"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/store"
)

// Store is what the ingester read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	ingest.Store // the scan write
	// The component inventory of reports that list components, and the
	// outbox of its component_affected events.
	ingest.ComponentStore
	// The bulk triage operations, whose inserts reach the ingester's
	// event source mapping too.
	bulktriage.Store
	FailScan(ctx context.Context, companyID int64, scanID, reason string, problems []store.ScanError, ev *store.Event) (bool, error)
	GetProject(ctx context.Context, companyID, projectID int64) (store.Project, error)
	GetScan(ctx context.Context, companyID int64, scanID string) (store.Scan, error)
}
