package webhooks

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/store"
)

// Store is what the webhooks handlers read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	Audit(ctx context.Context, companyID int64, e store.AuditEntry) error
	ChangeWebhook(ctx context.Context, before store.WebhookEndpoint, ch store.WebhookChange, action string) (store.WebhookEndpoint, error)
	CreateWebhook(ctx context.Context, w store.WebhookEndpoint) (store.WebhookEndpoint, error)
	DeleteWebhook(ctx context.Context, w store.WebhookEndpoint) error
	EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(store.Issue) error) error
	GetDelivery(ctx context.Context, companyID int64, id string) (store.Delivery, error)
	GetWebhook(ctx context.Context, companyID int64, id string) (store.WebhookEndpoint, error)
	ListAttempts(ctx context.Context, companyID int64, endpointID, outcome string, q store.PageQuery) ([]store.AttemptLog, store.PageResult, error)
	ListWebhooks(ctx context.Context, companyID int64, q store.PageQuery) ([]store.WebhookEndpoint, store.PageResult, error)
	RecentEvents(ctx context.Context, companyID int64, since time.Time, typeCodes []string, limit int) ([]store.Event, error)
	WebhookCount(ctx context.Context, companyID int64) (int, error)
}
