package notifications

import (
	"context"

	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what the notification and SLA settings handlers read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Catalog interface {
		PutSLASettings(ctx context.Context, companyID int64, st sla.Settings) error
		SLASettings(ctx context.Context, companyID int64) (sla.Settings, bool, error)
	}
	Deliveries interface {
		NotificationSettings(ctx context.Context, companyID int64, userID int64) (company map[string]schema.NotificationSetting, user map[string]schema.NotificationSetting, err error)
		UpdateNotificationSetting(ctx context.Context, companyID int64, userID int64, typeCode string, changes []delivery.ChannelChange) error
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Deliveries: st.Deliveries}
}
