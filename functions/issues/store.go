package issues

import (
	"context"

	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/exploits"
)

// Store is what the issues handlers read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	BaselineOpen(ctx context.Context, companyID, projectID int64, branch, tool string, fingerprints []string) (store.BaselineOpen, error)
	BranchProjects(ctx context.Context, companyID int64, branch string) ([]int64, error)
	CreateTriageOp(ctx context.Context, op store.TriageOp) (store.TriageOp, error)
	GetTriageOp(ctx context.Context, companyID int64, id string) (store.TriageOp, error)
	CreateExport(ctx context.Context, e store.Export) (store.Export, error)
	GetExport(ctx context.Context, companyID int64, id string) (store.Export, error)
	FilterScanSCAIssues(ctx context.Context, companyID int64, sc store.Scan, f exploits.Filter, q store.PageQuery) ([]store.SCAIssue, store.PageResult, int, error)
	FilterSCAIssues(ctx context.Context, companyID, projectID int64, f exploits.Filter, q store.PageQuery) ([]store.SCAIssue, store.PageResult, int, error)
	DecideIssue(ctx context.Context, companyID int64, id string, u store.IssueUpdate, scope string, by store.Actor) (store.Issue, error)
	EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(store.Issue) error) error
	FirstScanBranch(ctx context.Context, companyID, projectID int64) (string, error)
	GetIssue(ctx context.Context, companyID int64, id string) (store.Issue, error)
	GetProject(ctx context.Context, companyID, projectID int64) (store.Project, error)
	GetSCAIssue(ctx context.Context, companyID int64, id string) (store.SCAIssue, error)
	GetScan(ctx context.Context, companyID int64, scanID string) (store.Scan, error)
	GetUser(ctx context.Context, companyID, userID int64) (store.User, error)
	GroupsPage(ctx context.Context, companyID int64, sc store.Scope, dim store.Dimension, offset, limit int) ([]store.GroupCount, int64, error)
	IssueHistory(ctx context.Context, companyID int64, issueID string) ([]store.HistoryEntry, error)
	ListIssues(ctx context.Context, companyID int64, f store.IssueFilter, q store.PageQuery) ([]store.Issue, store.PageResult, int64, error)
	ListIssuesAmong(ctx context.Context, companyID int64, f store.IssueFilter, ids []string, q store.PageQuery) ([]store.Issue, store.PageResult, int64, error)
	ListIssuesWithout(ctx context.Context, companyID int64, f store.IssueFilter, without map[string]bool, q store.PageQuery) ([]store.Issue, store.PageResult, int64, error)
	ListProjects(ctx context.Context, companyID int64) ([]store.Project, error)
	ListSCAIssues(ctx context.Context, companyID, projectID int64, q store.PageQuery) ([]store.SCAIssue, store.PageResult, int, error)
	ListScans(ctx context.Context, companyID int64, q store.ScanQuery) (store.ScanPage, error)
	MergedGroups(ctx context.Context, companyID int64, scopes []store.Scope, dim store.Dimension) ([]store.GroupCount, error)
	ProjectByName(ctx context.Context, companyID int64, name string) (store.Project, error)
	ProjectQualityIssues(ctx context.Context, companyID, projectID int64, q store.PageQuery) ([]store.QualityIssue, store.PageResult, int, error)
	ScanHeadsOf(ctx context.Context, companyID, projectID int64, branch, tool string) ([]store.ScanHead, error)
	ScanIssues(ctx context.Context, companyID int64, sc store.Scan, q store.PageQuery) ([]store.Issue, store.PageResult, int, error)
	ScanQualityIssues(ctx context.Context, companyID int64, scanID, classification string, q store.PageQuery) ([]store.QualityIssue, store.PageResult, int, error)
	ScanReported(ctx context.Context, companyID int64, scanID, issueID string) (bool, error)
	SLASettings(ctx context.Context, companyID int64) (sla.Settings, bool, error)
	ScanSCAIssues(ctx context.Context, companyID int64, scanID string, q store.PageQuery) ([]store.SCAIssue, store.PageResult, int, error)
	Trend(ctx context.Context, companyID, projectID int64, days int) (store.TrendWindow, error)
	TriageIssues(ctx context.Context, companyID int64, f store.IssueFilter, status, reason string, terms store.RiskTerms, by store.Actor) (matched, changed int, err error)
}
