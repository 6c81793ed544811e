package delivery

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Channels of a notification setting, as stored attribute names.
const (
	ChannelEmail   = "email_enabled"
	ChannelWebhook = "webhook_enabled"
	// SettingFilter is a user preference's email filter (a CEL expression,
	// see shared/eventfilter), changed with a ChannelChange whose Text is
	// the expression ("" or nil removes it).
	SettingFilter = "filter"
)

// ChannelChange sets a channel (Value non-nil) or restores inheritance
// (nil); for SettingFilter, Text is the new filter.
type ChannelChange struct {
	Channel string
	Value   *bool
	Text    *string
}

// UpdateNotificationSetting applies a partial update in one atomic write
// with its audit entry: channels not named in changes keep their value.
// userID 0 addresses the company default.
func (s *Deliveries) UpdateNotificationSetting(ctx context.Context, companyID, userID int64, typeCode string, changes []ChannelChange) error {
	upd := expression.Set(expression.Name("updated_at"), expression.Value(s.t.Stamp())).
		Set(expression.Name("type_code"), expression.Value(typeCode))
	if userID != 0 {
		upd = upd.Set(expression.Name("user_id"), expression.Value(userID))
	}
	for _, c := range changes {
		switch {
		case c.Channel == SettingFilter && (c.Text == nil || *c.Text == ""):
			upd = upd.Remove(expression.Name(c.Channel))
		case c.Channel == SettingFilter:
			upd = upd.Set(expression.Name(c.Channel), expression.Value(*c.Text))
		case c.Value == nil:
			upd = upd.Remove(expression.Name(c.Channel))
		default:
			upd = upd.Set(expression.Name(c.Channel), expression.Value(*c.Value))
		}
	}
	action := "notification_default.update"
	if userID != 0 {
		action = "notification_preference.update"
	}
	return s.updateNotification(ctx, companyID, schema.NotificationKey(companyID, userID, typeCode), action, typeCode, upd, changes)
}

// updateNotification writes a company default or a user's preference in a
// transaction with its audit entry, whose before values come from a
// consistent read just before.
func (s *Deliveries) updateNotification(ctx context.Context, companyID int64, k ddb.Key, action, typeCode string, upd expression.UpdateBuilder, changes []ChannelChange) error {
	var before schema.NotificationSetting
	if err := s.t.GetItemConsistent(ctx, k, &before); err != nil && !errors.Is(err, ddb.ErrNotFound) {
		return err
	}
	old := map[string]*bool{ChannelEmail: before.EmailEnabled, ChannelWebhook: before.WebhookEnabled}
	diff := map[string]ledger.Change{}
	for _, c := range changes {
		if c.Channel == SettingFilter {
			if after := textOf(c.Text); after != before.Filter {
				diff[c.Channel] = ledger.Change{Before: ledger.Nullable(before.Filter), After: ledger.Nullable(after)}
			}
			continue
		}
		if b, a := old[c.Channel], c.Value; (b == nil) != (a == nil) || (b != nil && *b != *a) {
			diff[c.Channel] = ledger.Change{Before: b, After: a}
		}
	}
	item, err := s.t.TxUpdate(k, upd, nil)
	if err != nil {
		return err
	}
	audit, err := s.l.TxAudit(ctx, companyID, ledger.AuditEntry{
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
func (s *Deliveries) NotificationSettings(ctx context.Context, companyID, userID int64) (company, user map[string]schema.NotificationSetting, err error) {
	company, err = s.notificationLayer(ctx, companyID, schema.NotifCompanyPrefix)
	if err != nil {
		return nil, nil, err
	}
	user, err = s.notificationLayer(ctx, companyID, fmt.Sprintf("%s%d#", schema.NotifUserPrefix, userID))
	return company, user, err
}

func (s *Deliveries) notificationLayer(ctx context.Context, companyID int64, prefix string) (map[string]schema.NotificationSetting, error) {
	var items []schema.NotificationSetting
	if err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), prefix), true, &items); err != nil {
		return nil, err
	}
	out := make(map[string]schema.NotificationSetting, len(items))
	for _, it := range items {
		out[strings.TrimPrefix(it.SK, prefix)] = it
	}
	return out, nil
}

// CompanyNotificationSettings returns a company's defaults and every user's
// preferences (by user id), keyed by type code, in one query: what the
// dispatcher needs to resolve each user's effective settings.
func (s *Deliveries) CompanyNotificationSettings(ctx context.Context, companyID int64) (company map[string]schema.NotificationSetting, users map[int64]map[string]schema.NotificationSetting, err error) {
	var items []schema.NotificationSetting
	if err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), schema.NotifPrefix), true, &items); err != nil {
		return nil, nil, err
	}
	company, users = map[string]schema.NotificationSetting{}, map[int64]map[string]schema.NotificationSetting{}
	for _, it := range items {
		if it.UserID == 0 {
			company[it.TypeCode] = it
			continue
		}
		if users[it.UserID] == nil {
			users[it.UserID] = map[string]schema.NotificationSetting{}
		}
		users[it.UserID][it.TypeCode] = it
	}
	return company, users, nil
}

func textOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
