package integrations

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

// Store is what the integrations handlers read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Catalog interface {
		ClaimSCMCommand(ctx context.Context, c catalog.SCMCommand, now time.Time, ttl time.Duration) error
		CompleteSCMCommand(ctx context.Context, c catalog.SCMCommand) error
		FailSCMCommand(ctx context.Context, c catalog.SCMCommand) error
		GetIntegration(ctx context.Context, companyID int64, id string) (schema.Integration, error)
		IntegrationByHook(ctx context.Context, id string) (schema.Integration, error)
		ListIntegrations(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.Integration], error)
		MarkIntegrationExpired(ctx context.Context, companyID int64, id string, revision int64, ev schema.Event) error
		PRProjects(ctx context.Context, companyID int64, integration string, repo string, number string) ([]int64, error)
		UpdateIntegration(ctx context.Context, companyID int64, id string, revision int64, ch catalog.IntegrationChange) (schema.Integration, error)
		UserBySCMLogin(ctx context.Context, companyID int64, login string) (schema.User, error)
	}
	Lists interface {
		EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(findings.Issue) error) error
	}
	Scans interface {
		ListScans(ctx context.Context, companyID int64, sel scans.ScanQuery, q page.Request) (page.Page[scans.Scan], error)
	}
	Tenancy interface {
		GetCompany(ctx context.Context, id int64) (schema.Company, error)
	}
	Triage interface {
		DecideIssue(ctx context.Context, companyID int64, id string, u triage.IssueUpdate, scope string, by findings.Actor) (findings.Issue, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Lists: st.Lists, Scans: st.Scans, Tenancy: st.Tenancy, Triage: st.Triage}
}
