package projects

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
)

// Store is what the projects, scans and gate handlers read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	BaselineOpen(ctx context.Context, companyID, projectID int64, branch, tool string, fingerprints []string) (store.BaselineOpen, error)
	AllBlockingRules(ctx context.Context, companyID int64) ([]store.BlockingRule, error)
	EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(store.Issue) error) error
	FirstScanBranch(ctx context.Context, companyID, projectID int64) (string, error)
	GetCompany(ctx context.Context, id int64) (store.Company, error)
	GetProject(ctx context.Context, companyID, projectID int64) (store.Project, error)
	GetScan(ctx context.Context, companyID int64, scanID string) (store.Scan, error)
	GetUser(ctx context.Context, companyID, userID int64) (store.User, error)
	ListProjectsPage(ctx context.Context, companyID int64, q store.PageQuery) (store.ProjectPage, error)
	ListScans(ctx context.Context, companyID int64, q store.ScanQuery) (store.ScanPage, error)
	OpenOnBranch(ctx context.Context, companyID int64, branch string, issues []store.Issue) (map[string]bool, error)
	ProjectByName(ctx context.Context, companyID int64, name string) (store.Project, error)
	ProjectsByRepo(ctx context.Context, companyID int64, fragment string) ([]store.Project, error)
	RecordEventOnce(ctx context.Context, e store.Event) (bool, error)
	SetDefaultBranch(ctx context.Context, companyID, projectID int64, branch string) (store.Project, error)
	Trend(ctx context.Context, companyID, projectID int64, days int) (store.TrendWindow, error)
}
