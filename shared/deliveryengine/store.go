package deliveryengine

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/store"
)

// Store is what the delivery engine read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	AllWebhooks(ctx context.Context, companyID int64) ([]store.WebhookEndpoint, error)
	ClaimDelivery(ctx context.Context, d store.Delivery, now time.Time, lease time.Duration) (store.Delivery, bool, error)
	CompanyNotificationSettings(ctx context.Context, companyID int64) (company map[string]store.NotificationSetting, users map[int64]map[string]store.NotificationSetting, err error)
	DueDeliveries(ctx context.Context, now time.Time, limit int32) ([]store.Delivery, error)
	EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(store.Issue) error) error
	FinishAttempt(ctx context.Context, d store.Delivery, a store.Attempt) (store.Delivery, error)
	GetUser(ctx context.Context, companyID, userID int64) (store.User, error)
	GetWebhook(ctx context.Context, companyID int64, id string) (store.WebhookEndpoint, error)
	ListUsers(ctx context.Context, companyID int64) ([]store.User, error)
	ReclaimDelivery(ctx context.Context, companyID int64, id string, now time.Time, lease time.Duration, anyState bool) (store.Delivery, bool, error)
	RecordEvent(ctx context.Context, e store.Event) error
	RecordRecentEvent(ctx context.Context, e store.Event) error
	UpdateWebhook(ctx context.Context, companyID int64, id string, ch store.WebhookChange) (store.WebhookEndpoint, error)
}
