package store

import (
	"context"
	"errors"
	"maps"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store/internal/schema"
)

// slaSettingsItem is a company's SLA settings.
type slaSettingsItem struct {
	Key
	DaysToFix   map[string]int `dynamodbav:"days_to_fix"`
	DueSoonDays int            `dynamodbav:"due_soon_days"`
	// AcceptanceDays is 0 in settings stored before it existed (the default).
	AcceptanceDays int    `dynamodbav:"acceptance_days,omitempty"`
	UpdatedAt      string `dynamodbav:"updated_at"`
}

func slaSettingsKey(companyID int64) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: "SETTINGS#SLA"}
}

// SLASettings returns a company's SLA settings, and whether the company set
// them (false: the defaults).
func (s *Store) SLASettings(ctx context.Context, companyID int64) (sla.Settings, bool, error) {
	return s.slaSettings(ctx, companyID, s.t.GetItem)
}

// slaSettings reads the settings with get (consistent or not).
func (s *Store) slaSettings(ctx context.Context, companyID int64, get func(context.Context, Key, any) error) (sla.Settings, bool, error) {
	var it slaSettingsItem
	err := get(ctx, slaSettingsKey(companyID), &it)
	if errors.Is(err, ErrNotFound) {
		return sla.Defaults(), false, nil
	}
	if err != nil {
		return sla.Settings{}, false, err
	}
	out := sla.Defaults()
	for k, v := range it.DaysToFix {
		out.DaysToFix[k] = v
	}
	out.DueSoonDays = it.DueSoonDays
	if it.AcceptanceDays > 0 {
		out.AcceptanceDays = it.AcceptanceDays
	}
	return out, true, nil
}

// PutSLASettings stores a company's SLA settings with the audit entry of
// what changed (from the settings read just before).
func (s *Store) PutSLASettings(ctx context.Context, companyID int64, st sla.Settings) error {
	before, _, err := s.slaSettings(ctx, companyID, s.t.GetItemConsistent) // the audit's "before"
	if err != nil {
		return err
	}
	item, err := s.t.TxPut(slaSettingsItem{Key: slaSettingsKey(companyID), DaysToFix: st.DaysToFix, DueSoonDays: st.DueSoonDays,
		AcceptanceDays: st.AcceptanceDays, UpdatedAt: s.t.Stamp()}, nil)
	if err != nil {
		return err
	}
	changes := map[string]Change{}
	if !maps.Equal(before.DaysToFix, st.DaysToFix) {
		changes["days_to_fix"] = Change{Before: before.DaysToFix, After: st.DaysToFix}
	}
	if before.DueSoonDays != st.DueSoonDays {
		changes["due_soon_days"] = Change{Before: before.DueSoonDays, After: st.DueSoonDays}
	}
	if before.AcceptanceDays != st.AcceptanceDays {
		changes["risk_acceptance_days"] = Change{Before: before.AcceptanceDays, After: st.AcceptanceDays}
	}
	audit, err := s.l.TxAudit(ctx, companyID, AuditEntry{Action: "sla_settings.update", TargetType: "sla_settings", TargetID: strconv.FormatInt(companyID, 10), Changes: changes})
	if err != nil {
		return err
	}
	return s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...))
}
