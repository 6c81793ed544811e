package issues

import (
	"context"

	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/baselines"
	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/quality"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

// Store is what the issues handlers read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Baselines interface {
		BaselineOpen(ctx context.Context, companyID int64, projectID int64, branch string, tool string, fingerprints []string) (baselines.Open, error)
	}
	Catalog interface {
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
		AllProjects(ctx context.Context, companyID int64) ([]schema.Project, error)
		ProjectByName(ctx context.Context, companyID int64, name string) (schema.Project, error)
		SLASettings(ctx context.Context, companyID int64) (sla.Settings, bool, error)
	}
	Exports interface {
		CreateExport(ctx context.Context, e schema.ExportItem) (schema.ExportItem, error)
		GetExport(ctx context.Context, companyID int64, id string) (schema.ExportItem, error)
	}
	Lists interface {
		BranchProjects(ctx context.Context, companyID int64, branch string) ([]int64, error)
		EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(findings.Issue) error) error
		GetIssue(ctx context.Context, companyID int64, id string) (findings.Issue, error)
		ListGroups(ctx context.Context, companyID int64, sc schema.Scope, dim schema.Dimension, q page.Request) (page.Page[findings.GroupCount], error)
		IssueHistory(ctx context.Context, companyID int64, issueID string) ([]findings.HistoryEntry, error)
		ListIssues(ctx context.Context, companyID int64, f issuelists.IssueFilter, q page.Request) (page.Page[findings.Issue], error)
		ListIssuesAmong(ctx context.Context, companyID int64, f issuelists.IssueFilter, ids []string, q page.Request) (page.Page[findings.Issue], error)
		ListIssuesWithout(ctx context.Context, companyID int64, f issuelists.IssueFilter, without map[string]bool, q page.Request) (page.Page[findings.Issue], error)
		ListMergedGroups(ctx context.Context, companyID int64, scopes []schema.Scope, dim schema.Dimension, status string, q page.Request) (page.Page[findings.GroupCount], error)
		ScanHeadsOf(ctx context.Context, companyID int64, projectID int64, branch string, tool string) ([]findings.ScanHead, error)
		ListScanIssues(ctx context.Context, companyID int64, sc scans.Scan, q page.Request) (page.Page[findings.Issue], error)
		ScanReported(ctx context.Context, companyID int64, scanID string, issueID string) (bool, error)
		Trend(ctx context.Context, companyID int64, projectID int64, days int) (issuelists.TrendWindow, error)
	}
	Quality interface {
		ListProjectQualityIssues(ctx context.Context, companyID int64, projectID int64, q page.Request) (page.Page[quality.Issue], error)
		ListScanQualityIssues(ctx context.Context, companyID int64, scanID string, classification string, q page.Request) (page.Page[quality.Issue], error)
	}
	SCA interface {
		ListFilteredSCAIssues(ctx context.Context, companyID int64, projectID int64, f exploits.Filter, q page.Request) (page.Page[sca.Issue], error)
		ListFilteredScanSCAIssues(ctx context.Context, companyID int64, sc scans.Scan, f exploits.Filter, q page.Request) (page.Page[sca.Issue], error)
		GetSCAIssue(ctx context.Context, companyID int64, id string) (sca.Issue, error)
		ListSCAIssues(ctx context.Context, companyID int64, projectID int64, q page.Request) (page.Page[sca.Issue], error)
		ListScanSCAIssues(ctx context.Context, companyID int64, scanID string, q page.Request) (page.Page[sca.Issue], error)
	}
	Scans interface {
		FirstScanBranch(ctx context.Context, companyID int64, projectID int64) (string, error)
		GetScan(ctx context.Context, companyID int64, scanID string) (scans.Scan, error)
		ListScans(ctx context.Context, companyID int64, sel scans.ScanQuery, q page.Request) (page.Page[scans.Scan], error)
	}
	Tenancy interface {
		GetUser(ctx context.Context, companyID int64, userID int64) (schema.User, error)
	}
	Triage interface {
		CreateTriageOp(ctx context.Context, op schema.TriageOpItem) (schema.TriageOpItem, error)
		DecideIssue(ctx context.Context, companyID int64, id string, u triage.IssueUpdate, scope string, by findings.Actor) (findings.Issue, error)
		GetTriageOp(ctx context.Context, companyID int64, id string) (schema.TriageOpItem, error)
		TriageIssues(ctx context.Context, companyID int64, f issuelists.IssueFilter, status string, reason string, terms schema.Terms, by findings.Actor) (matched int, changed int, err error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Baselines: st.Baselines, Catalog: st.Catalog, Exports: st.Exports, Lists: st.Lists, Quality: st.Quality, SCA: st.SCA, Scans: st.Scans, Tenancy: st.Tenancy, Triage: st.Triage}
}
