package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// NotificationSetting is a company default (UserID 0) or a user preference
// for one notification type. A nil channel inherits the layer below.
type NotificationSetting struct {
	Key
	TypeCode       string `dynamodbav:"type_code"`
	UserID         int64  `dynamodbav:"user_id,omitempty"`
	EmailEnabled   *bool  `dynamodbav:"email_enabled,omitempty"`
	WebhookEnabled *bool  `dynamodbav:"webhook_enabled,omitempty"`
	UpdatedAt      string `dynamodbav:"updated_at"`
}

// Channels of a notification setting, as stored attribute names.
const (
	ChannelEmail   = "email_enabled"
	ChannelWebhook = "webhook_enabled"
)

const (
	notifCompanyPrefix = "NOTIF#COMPANY#"
	notifUserPrefix    = "NOTIF#USER#"
)

func notificationKey(companyID, userID int64, typeCode string) Key {
	if userID == 0 {
		return Key{PK: schema.CompanyPK(companyID), SK: notifCompanyPrefix + typeCode}
	}
	return Key{PK: schema.CompanyPK(companyID), SK: fmt.Sprintf("%s%d#%s", notifUserPrefix, userID, typeCode)}
}

// ChannelChange sets a channel (Value non-nil) or restores inheritance (nil).
type ChannelChange struct {
	Channel string
	Value   *bool
}

// UpdateNotificationSetting applies a partial update in one atomic write
// with its audit entry: channels not named in changes keep their value.
// userID 0 addresses the company default.
func (s *Store) UpdateNotificationSetting(ctx context.Context, companyID, userID int64, typeCode string, changes []ChannelChange) error {
	upd := expression.Set(expression.Name("updated_at"), expression.Value(s.t.Stamp())).
		Set(expression.Name("type_code"), expression.Value(typeCode))
	if userID != 0 {
		upd = upd.Set(expression.Name("user_id"), expression.Value(userID))
	}
	for _, c := range changes {
		if c.Value == nil {
			upd = upd.Remove(expression.Name(c.Channel))
		} else {
			upd = upd.Set(expression.Name(c.Channel), expression.Value(*c.Value))
		}
	}
	action := "notification_default.update"
	if userID != 0 {
		action = "notification_preference.update"
	}
	return s.updateNotification(ctx, companyID, notificationKey(companyID, userID, typeCode), action, typeCode, upd, changes)
}

// updateNotification writes a company default or a user's preference in a
// transaction with its audit entry, whose before values come from a
// consistent read just before.
func (s *Store) updateNotification(ctx context.Context, companyID int64, k Key, action, typeCode string, upd expression.UpdateBuilder, changes []ChannelChange) error {
	var before NotificationSetting
	if err := s.t.GetItemConsistent(ctx, k, &before); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	old := map[string]*bool{ChannelEmail: before.EmailEnabled, ChannelWebhook: before.WebhookEnabled}
	diff := map[string]Change{}
	for _, c := range changes {
		if b, a := old[c.Channel], c.Value; (b == nil) != (a == nil) || (b != nil && *b != *a) {
			diff[c.Channel] = Change{Before: b, After: a}
		}
	}
	item, err := s.t.TxUpdate(k, upd, nil)
	if err != nil {
		return err
	}
	audit, err := s.l.TxAudit(ctx, companyID, AuditEntry{
		Action: action, TargetType: "notification_type", TargetID: typeCode, Changes: diff,
	})
	if err != nil {
		return err
	}
	return s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...))
}

// NotificationSettings returns the company defaults and the user's
// preferences, keyed by type code (two queries, neither touching other
// users' items).
func (s *Store) NotificationSettings(ctx context.Context, companyID, userID int64) (company, user map[string]NotificationSetting, err error) {
	company, err = s.notificationLayer(ctx, companyID, notifCompanyPrefix)
	if err != nil {
		return nil, nil, err
	}
	user, err = s.notificationLayer(ctx, companyID, fmt.Sprintf("%s%d#", notifUserPrefix, userID))
	return company, user, err
}

func (s *Store) notificationLayer(ctx context.Context, companyID int64, prefix string) (map[string]NotificationSetting, error) {
	var items []NotificationSetting
	if err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), prefix), true, &items); err != nil {
		return nil, err
	}
	out := make(map[string]NotificationSetting, len(items))
	for _, it := range items {
		out[strings.TrimPrefix(it.SK, prefix)] = it
	}
	return out, nil
}

// CompanyNotificationSettings returns a company's defaults and every user's
// preferences (by user id), keyed by type code, in one query: what the
// dispatcher needs to resolve each user's effective settings.
func (s *Store) CompanyNotificationSettings(ctx context.Context, companyID int64) (company map[string]NotificationSetting, users map[int64]map[string]NotificationSetting, err error) {
	var items []NotificationSetting
	if err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), "NOTIF#"), true, &items); err != nil {
		return nil, nil, err
	}
	company, users = map[string]NotificationSetting{}, map[int64]map[string]NotificationSetting{}
	for _, it := range items {
		if it.UserID == 0 {
			company[it.TypeCode] = it
			continue
		}
		if users[it.UserID] == nil {
			users[it.UserID] = map[string]NotificationSetting{}
		}
		users[it.UserID][it.TypeCode] = it
	}
	return company, users, nil
}
