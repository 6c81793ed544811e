package ingester

import (
	"context"

	"github.com/acme/codescan-api/shared/bulktriage"
	"github.com/acme/codescan-api/shared/scanlife"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/scans"
)

// Store is what the ingester reads and writes: the scan a job names, then
// what its parts touch, each part's own composition: ingesting a scan
// (scanlife's) and running a bulk triage operation (bulktriage's); StoreOf
// composes it from the store's areas.
type Store struct {
	Scans interface {
		GetScan(ctx context.Context, companyID int64, scanID string) (scans.Scan, error)
	}
	Ingesting scanlife.Ingesting
	Bulk      bulktriage.Store
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Scans: st.Scans, Ingesting: scanlife.IngestingOf(st), Bulk: bulktriage.StoreOf(st)}
}
