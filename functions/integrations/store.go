package integrations

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what the integrations handlers read and write: the
// integrations and the pull-request commands they claim. (The command's
// triager has its own: prtriage.StoreOf.) StoreOf composes it from the
// store's areas.
type Store struct {
	Catalog interface {
		ClaimSCMCommand(ctx context.Context, c catalog.SCMCommand, now time.Time, ttl time.Duration) error
		CompleteSCMCommand(ctx context.Context, c catalog.SCMCommand) error
		FailSCMCommand(ctx context.Context, c catalog.SCMCommand) error
		GetIntegration(ctx context.Context, companyID int64, id string) (schema.Integration, error)
		IntegrationByHook(ctx context.Context, id string) (schema.Integration, error)
		ListIntegrations(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.Integration], error)
		MarkIntegrationExpired(ctx context.Context, companyID int64, id string, revision int64, ev schema.Event) error
		UpdateIntegration(ctx context.Context, companyID int64, id string, revision int64, ch catalog.IntegrationChange) (schema.Integration, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store { return Store{Catalog: st.Catalog} }
