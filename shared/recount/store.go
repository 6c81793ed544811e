package recount

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/quality"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/trends"
)

// Store is what the recount check read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Catalog interface {
		AllProjects(ctx context.Context, companyID int64) ([]schema.Project, error)
	}
	Lists interface {
		BranchProjects(ctx context.Context, companyID int64, branch string) ([]int64, error)
		EachIssue(ctx context.Context, companyID int64, fn func(findings.Issue) error) error
		ListGroups(ctx context.Context, companyID int64, sc schema.Scope, dim schema.Dimension, q page.Request) (page.Page[findings.GroupCount], error)
		ScopeGroups(ctx context.Context, companyID int64, sc schema.Scope, dim schema.Dimension) ([]findings.GroupCount, error)
	}
	Quality interface {
		EachQualityIssue(ctx context.Context, companyID int64, fn func(quality.Issue) error) error
		ListProjectQualityIssues(ctx context.Context, companyID int64, projectID int64, q page.Request) (page.Page[quality.Issue], error)
		QualityClasses(ctx context.Context, companyID int64, scanID string) ([]quality.Class, error)
	}
	SCA interface {
		EachSCAIssue(ctx context.Context, companyID int64, fn func(sca.Issue) error) error
		ListSCAIssues(ctx context.Context, companyID int64, projectID int64, q page.Request) (page.Page[sca.Issue], error)
		ListScanSCAIssues(ctx context.Context, companyID int64, scanID string, q page.Request) (page.Page[sca.Issue], error)
	}
	Scans interface {
		ListScans(ctx context.Context, companyID int64, sel scans.ScanQuery, q page.Request) (page.Page[scans.Scan], error)
	}
	Trends interface {
		Snapshot(ctx context.Context, companyID int64, projectID int64, first string) (trends.Snapshot, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Lists: st.Lists, Quality: st.Quality, SCA: st.SCA, Scans: st.Scans, Trends: st.Trends}
}
