package notifications

import (
	"context"

	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
)

// Store is what the notification and SLA settings handlers read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	NotificationSettings(ctx context.Context, companyID, userID int64) (company, user map[string]store.NotificationSetting, err error)
	PutSLASettings(ctx context.Context, companyID int64, st sla.Settings) error
	SLASettings(ctx context.Context, companyID int64) (sla.Settings, bool, error)
	UpdateNotificationSetting(ctx context.Context, companyID, userID int64, typeCode string, changes []store.ChannelChange) error
}
