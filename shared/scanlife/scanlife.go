// Package scanlife owns a scan's life from the upload that creates it:
// accepting an upload (the scan's id, the project got or created, a
// repeated or conflicting run), checking a report (one decode, parse and
// limit path, with one set of messages, for the upload's synchronous
// answer and for the ingester alike) and failing a scan (every journal
// its writers left owing settled, then the scan ended incomplete with its
// scan_failed event), for the ingester and the stalled sweep alike. The
// upload handler, the ingester and the sweep call it; it reaches the store
// through the narrow Store and Failing it declares (see
// docs/architecture.md, "A scan's life"). Writing a checked report's
// findings is still the ingester's (shared/ingest.Write), and completing
// the scan still the SAST lifecycle's last transaction
// (findings.ApplyScan).
package scanlife

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what a scan's life reads and writes: per area of the store,
// the calls it makes and no others; StoreOf composes it from the store's
// areas.
type Store struct {
	Catalog interface {
		CreateProject(ctx context.Context, p schema.Project) (schema.Project, error)
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
		ProjectByName(ctx context.Context, companyID int64, name string) (schema.Project, error)
		SetProjectRepoURLIfEmpty(ctx context.Context, companyID int64, projectID int64, repoURL string) error
	}
	Scans interface {
		CreateScan(ctx context.Context, sc scans.Scan) (scans.Scan, error)
		ScanByRunID(ctx context.Context, companyID int64, runID string) (scans.Scan, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Scans: st.Scans}
}
