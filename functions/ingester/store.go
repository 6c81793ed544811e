package ingester

import (
	"context"

	storecomponents "github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/components"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/quality"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what the ingester read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Catalog interface {
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
	}
	Components interface {
		HoldersOf(ctx context.Context, companyID int64, pkg string, version string, limit int) ([]components.Holder, bool, error)
		PackageVersions(ctx context.Context, companyID int64, pkg string) ([]components.VersionCount, error)
		ReplaceComponents(ctx context.Context, ref components.SetRef, list []storecomponents.Component) (components.Changes, error)
	}
	Findings interface {
		ApplyScan(ctx context.Context, companyID int64, sc scans.Scan, found []findings.Issue) (findings.ApplyResult, error)
		SettleScanJournal(ctx context.Context, companyID int64, sc scans.Scan) error
	}
	Ledger interface {
		RecordEventOnce(ctx context.Context, e schema.Event) (bool, error)
	}
	Lists interface {
		ListIssues(ctx context.Context, companyID int64, f issuelists.IssueFilter, q page.Request) (page.Page[findings.Issue], error)
	}
	Quality interface {
		PutQualityIssues(ctx context.Context, companyID int64, issues []quality.Issue) error
	}
	SCA interface {
		PutScanSCAIssues(ctx context.Context, companyID int64, sc scans.Scan, found []sca.Issue) error
	}
	Scans interface {
		FailScan(ctx context.Context, sc scans.Scan, reason string, problems []scans.ScanError, ev *schema.Event) (bool, error)
		GetScan(ctx context.Context, companyID int64, scanID string) (scans.Scan, error)
		SettleCounted(ctx context.Context, companyID int64, scanID string) error
	}
	Triage interface {
		ApplyTriagePage(ctx context.Context, op schema.TriageOpItem) (schema.TriageOpItem, error)
		CollectRulePage(ctx context.Context, op schema.TriageOpItem, limit int) (schema.TriageOpItem, error)
		CollectTriageIDs(ctx context.Context, op schema.TriageOpItem, ids []string, next string) (schema.TriageOpItem, error)
		FailTriageOp(ctx context.Context, companyID int64, id string, reason string) error
		FinishTriageOp(ctx context.Context, op schema.TriageOpItem) error
		GetTriageOp(ctx context.Context, companyID int64, id string) (schema.TriageOpItem, error)
		StartTriageOp(ctx context.Context, companyID int64, id string, maxAttempts int) (schema.TriageOpItem, bool, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Components: st.Components, Findings: st.Findings, Ledger: st.Ledger, Lists: st.Lists, Quality: st.Quality, SCA: st.SCA, Scans: st.Scans, Triage: st.Triage}
}
