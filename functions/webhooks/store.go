package webhooks

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what the webhooks handlers read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Deliveries interface {
		ChangeWebhook(ctx context.Context, before schema.WebhookEndpoint, ch delivery.WebhookChange, action string) (schema.WebhookEndpoint, error)
		CreateWebhook(ctx context.Context, w schema.WebhookEndpoint) (schema.WebhookEndpoint, error)
		DeleteWebhook(ctx context.Context, w schema.WebhookEndpoint) error
		GetDelivery(ctx context.Context, companyID int64, id string) (schema.Delivery, error)
		GetWebhook(ctx context.Context, companyID int64, id string) (schema.WebhookEndpoint, error)
		ListAttempts(ctx context.Context, companyID int64, endpointID string, outcome string, q page.Request) (page.Page[schema.AttemptLog], error)
		ListWebhooks(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.WebhookEndpoint], error)
		RecentEvents(ctx context.Context, companyID int64, since time.Time, typeCodes []string, limit int) ([]schema.Event, error)
	}
	Ledger interface {
		Audit(ctx context.Context, companyID int64, e ledger.AuditEntry) error
	}
	Lists interface {
		EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(findings.Issue) error) error
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Deliveries: st.Deliveries, Ledger: st.Ledger, Lists: st.Lists}
}
