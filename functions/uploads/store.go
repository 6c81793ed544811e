package uploads

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/store"
)

// Store is what the upload handlers read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	AppendUploadChunk(ctx context.Context, companyID int64, r store.UploadRun, c store.UploadChunk, at time.Time) (store.UploadRun, error)
	CreateProject(ctx context.Context, p store.Project) (store.Project, error)
	CreateScan(ctx context.Context, sc store.Scan) (store.Scan, error)
	GetProject(ctx context.Context, companyID, projectID int64) (store.Project, error)
	GetUploadRun(ctx context.Context, companyID int64, runID string, at time.Time) (store.UploadRun, error)
	ProjectByName(ctx context.Context, companyID int64, name string) (store.Project, error)
	PutCIData(ctx context.Context, companyID int64, d store.CIData) error
	RecordEventOnce(ctx context.Context, e store.Event) (bool, error)
	SetScanPullRequest(ctx context.Context, companyID int64, scanID string, pr pullrequest.PullRequest) (store.Scan, error)
	ReserveSource(ctx context.Context, companyID int64, runID string, size int64, b store.SourceBudget, expires time.Time) error
	ScanByRunID(ctx context.Context, companyID int64, runID string) (store.Scan, error)
	SetProjectRepoURLIfEmpty(ctx context.Context, companyID, projectID int64, repoURL string) error
	SetScanRepoURL(ctx context.Context, companyID int64, scanID, repoURL string) error
	StartUploadRun(ctx context.Context, companyID int64, r store.UploadRun, quota int64, at time.Time) error
}
