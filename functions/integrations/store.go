package integrations

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
)

// Store is what the integrations handlers read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	GetIntegration(ctx context.Context, companyID int64, id string) (store.Integration, error)
	IntegrationCount(ctx context.Context, companyID int64) (int, error)
	IntegrationsPage(ctx context.Context, companyID int64, q store.PageQuery) ([]store.Integration, store.PageResult, error)
	MarkIntegrationExpired(ctx context.Context, companyID int64, id string, revision int64, ev store.Event) error
	UpdateIntegration(ctx context.Context, companyID int64, id string, revision int64, ch store.IntegrationChange) (store.Integration, error)
}
