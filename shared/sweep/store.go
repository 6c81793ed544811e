package sweep

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what the stalled-scan sweep read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Catalog interface {
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
	}
	Findings interface {
		SettleScanJournal(ctx context.Context, companyID int64, sc scans.Scan) error
	}
	Scans interface {
		ClearStalled(ctx context.Context, st scans.StalledScan) error
		FailScan(ctx context.Context, sc scans.Scan, reason string, problems []scans.ScanError, ev *schema.Event) (bool, error)
		GetScan(ctx context.Context, companyID int64, scanID string) (scans.Scan, error)
		SettleCounted(ctx context.Context, companyID int64, scanID string) error
		StalledScans(ctx context.Context, before time.Time, limit int) ([]scans.StalledScan, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Findings: st.Findings, Scans: st.Scans}
}
