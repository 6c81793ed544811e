package sweep

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/scanlife"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/scans"
)

// Store is what the stalled-scan sweep reads and writes: the stalled scans
// it finds and reads, and failing a scan (scanlife's own composition);
// StoreOf composes it from the store's areas.
type Store struct {
	Scans interface {
		ClearStalled(ctx context.Context, st scans.StalledScan) error
		GetScan(ctx context.Context, companyID int64, scanID string) (scans.Scan, error)
		StalledScans(ctx context.Context, before time.Time, limit int) ([]scans.StalledScan, error)
	}
	Failing scanlife.Failing
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Scans: st.Scans, Failing: scanlife.FailingOf(st)}
}
