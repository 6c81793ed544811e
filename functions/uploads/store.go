package uploads

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what the upload handlers read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Catalog interface {
		SetProjectRepoURLIfEmpty(ctx context.Context, companyID int64, projectID int64, repoURL string) error
	}
	Ledger interface {
		RecordEventOnce(ctx context.Context, e schema.Event) (bool, error)
	}
	Scans interface {
		AppendUploadChunk(ctx context.Context, companyID int64, r scans.UploadRun, c scans.UploadChunk, at time.Time) (scans.UploadRun, error)
		GetUploadRun(ctx context.Context, companyID int64, runID string, at time.Time) (scans.UploadRun, error)
		PutCIData(ctx context.Context, companyID int64, d scans.CIData) error
		ReserveSource(ctx context.Context, companyID int64, runID string, size int64, b scans.SourceBudget, expires time.Time) error
		ScanByRunID(ctx context.Context, companyID int64, runID string) (scans.Scan, error)
		SetScanPullRequest(ctx context.Context, companyID int64, scanID string, pr pullrequest.PullRequest) (scans.Scan, error)
		SetScanRepoURL(ctx context.Context, companyID int64, scanID string, repoURL string) error
		StartUploadRun(ctx context.Context, companyID int64, r scans.UploadRun, quota int64, at time.Time) error
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Ledger: st.Ledger, Scans: st.Scans}
}
