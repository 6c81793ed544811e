package deliveryengine

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what the delivery engine read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Deliveries interface {
		AllWebhooks(ctx context.Context, companyID int64) ([]schema.WebhookEndpoint, error)
		ClaimDelivery(ctx context.Context, d schema.Delivery, now time.Time, lease time.Duration) (schema.Delivery, bool, error)
		CompanyNotificationSettings(ctx context.Context, companyID int64) (company map[string]schema.NotificationSetting, users map[int64]map[string]schema.NotificationSetting, err error)
		DueDeliveries(ctx context.Context, now time.Time, limit int32) ([]schema.Delivery, error)
		FinishAttempt(ctx context.Context, d schema.Delivery, a delivery.Attempt) (schema.Delivery, error)
		GetWebhook(ctx context.Context, companyID int64, id string) (schema.WebhookEndpoint, error)
		ReclaimDelivery(ctx context.Context, companyID int64, id string, now time.Time, lease time.Duration, anyState bool) (schema.Delivery, bool, error)
		RecordRecentEvent(ctx context.Context, e schema.Event) error
		UpdateWebhook(ctx context.Context, companyID int64, id string, ch delivery.WebhookChange) (schema.WebhookEndpoint, error)
	}
	Ledger interface {
		RecordEvent(ctx context.Context, e schema.Event) error
	}
	Lists interface {
		EachScanIssue(ctx context.Context, companyID int64, scanID string, fn func(findings.Issue) error) error
	}
	Tenancy interface {
		GetUser(ctx context.Context, companyID int64, userID int64) (schema.User, error)
		AllUsers(ctx context.Context, companyID int64) ([]schema.User, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Deliveries: st.Deliveries, Ledger: st.Ledger, Lists: st.Lists, Tenancy: st.Tenancy}
}
