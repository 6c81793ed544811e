package integrations

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/prtriage"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/catalog"
)

// Store is what the integrations handlers read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	prtriage.Store
	GetIntegration(ctx context.Context, companyID int64, id string) (store.Integration, error)
	IntegrationByHook(ctx context.Context, id string) (store.Integration, error)
	ClaimSCMCommand(ctx context.Context, c catalog.SCMCommand, now time.Time, ttl time.Duration) error
	CompleteSCMCommand(ctx context.Context, c catalog.SCMCommand) error
	FailSCMCommand(ctx context.Context, c catalog.SCMCommand) error
	IntegrationCount(ctx context.Context, companyID int64) (int, error)
	IntegrationsPage(ctx context.Context, companyID int64, q store.PageQuery) ([]store.Integration, store.PageResult, error)
	MarkIntegrationExpired(ctx context.Context, companyID int64, id string, revision int64, ev store.Event) error
	UpdateIntegration(ctx context.Context, companyID int64, id string, revision int64, ch store.IntegrationChange) (store.Integration, error)
}
