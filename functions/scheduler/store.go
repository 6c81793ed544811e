package scheduler

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/exploitfeed"
	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/components"
	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/sweep"
)

// Store is what the scheduler jobs read and write: per area of the store, the calls
// they make and no others, and the sweep's own composition; StoreOf composes it
// from the store's areas.
type Store struct {
	Catalog interface {
		BackfillProjectRepoKeys(ctx context.Context, until time.Time) (done bool, written int, err error)
		SLASettings(ctx context.Context, companyID int64) (sla.Settings, bool, error)
	}
	Components interface {
		HoldersOf(ctx context.Context, companyID int64, pkg string, version string, limit int) ([]components.Holder, bool, error)
		PackageVersions(ctx context.Context, companyID int64, pkg string) ([]components.VersionCount, error)
	}
	Exploits interface {
		Import(ctx context.Context, cat exploitfeed.Catalog, sc exploitfeed.Scores) (exploits.Result, error)
		Lookup(ctx context.Context, cves []string) (map[string]exploits.Enrichment, bool, error)
	}
	Findings interface {
		MarkBreached(ctx context.Context, i findings.Issue) error
	}
	Ledger interface {
		RecordEventOnce(ctx context.Context, e schema.Event) (bool, error)
	}
	Lists interface {
		BackfillDueIndex(ctx context.Context, until time.Time) (done bool, written int, err error)
		CountOpenDetected(ctx context.Context, companyID int64, urgency string, after time.Time, upTo time.Time) (int64, error)
		EachPendingDue(ctx context.Context, companyID int64, urgency string, by time.Time, fn func(findings.Issue) error) error
		OpenByUrgency(ctx context.Context, companyID int64) (map[string]int64, error)
	}
	SCA interface {
		ListFilteredSCAIssues(ctx context.Context, companyID int64, projectID int64, f exploits.Filter, q page.Request) (page.Page[sca.Issue], error)
	}
	Tenancy interface {
		CompanyIDs(ctx context.Context) ([]int64, error)
	}
	Triage interface {
		ExpireAcceptances(ctx context.Context, companyID int64) (int, error)
	}
	// Sweep is the stalled-scan sweep's own composition (the "stalled" job).
	Sweep sweep.Store
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Components: st.Components, Exploits: st.Exploits, Findings: st.Findings, Ledger: st.Ledger, Lists: st.Lists, SCA: st.SCA,
		Tenancy: st.Tenancy, Triage: st.Triage, Sweep: sweep.StoreOf(st)}
}
