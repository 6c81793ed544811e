package projects

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/baselines"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what the projects, scans and gate handlers read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Baselines interface {
		BaselineOpen(ctx context.Context, companyID int64, projectID int64, branch string, tool string, fingerprints []string) (baselines.Open, error)
	}
	Catalog interface {
		AllBlockingRules(ctx context.Context, companyID int64) ([]schema.BlockingRule, error)
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
		ListProjects(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.Project], error)
		ListProjectsByRepo(ctx context.Context, companyID int64, fragment string, q page.Request) (page.Page[schema.Project], error)
		ProjectByName(ctx context.Context, companyID int64, name string) (schema.Project, error)
		SetDefaultBranch(ctx context.Context, companyID int64, projectID int64, branch string) (schema.Project, error)
	}
	Ledger interface {
		RecordEventOnce(ctx context.Context, e schema.Event) (bool, error)
	}
	Lists interface {
		EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(findings.Issue) error) error
		OpenOnBranch(ctx context.Context, companyID int64, branch string, issues []findings.Issue) (map[string]bool, error)
		Trend(ctx context.Context, companyID int64, projectID int64, days int) (issuelists.TrendWindow, error)
	}
	Scans interface {
		FirstScanBranch(ctx context.Context, companyID int64, projectID int64) (string, error)
		GetScan(ctx context.Context, companyID int64, scanID string) (scans.Scan, error)
		ListScans(ctx context.Context, companyID int64, sel scans.ScanQuery, q page.Request) (page.Page[scans.Scan], error)
	}
	Tenancy interface {
		GetCompany(ctx context.Context, id int64) (schema.Company, error)
		GetUser(ctx context.Context, companyID int64, userID int64) (schema.User, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Baselines: st.Baselines, Catalog: st.Catalog, Ledger: st.Ledger, Lists: st.Lists, Scans: st.Scans, Tenancy: st.Tenancy}
}
