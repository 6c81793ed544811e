package catalog

import (
	"context"
	"errors"
	"maps"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
)

// SLASettings returns a company's SLA settings, and whether the company set
// them (false: the defaults).
func (s *Catalog) SLASettings(ctx context.Context, companyID int64) (sla.Settings, bool, error) {
	return ReadSLASettings(ctx, companyID, s.t.GetItem)
}

// ReadSLASettings reads a company's settings with get (a table's read,
// consistent or not), as SLASettings does: for the issue write path, which
// decides deadlines with a strongly consistent read.
func ReadSLASettings(ctx context.Context, companyID int64, get func(context.Context, ddb.Key, any) error) (sla.Settings, bool, error) {
	var it schema.SLASettingsItem
	err := get(ctx, schema.SLASettingsKey(companyID), &it)
	if errors.Is(err, ddb.ErrNotFound) {
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
	out.DismissalRulesNeedApproval = it.DismissalRulesNeedApproval
	return out, true, nil
}

// PutSLASettings stores a company's SLA settings with the audit entry of
// what changed (from the settings read just before).
func (s *Catalog) PutSLASettings(ctx context.Context, companyID int64, st sla.Settings) error {
	before, _, err := ReadSLASettings(ctx, companyID, s.t.GetItemConsistent) // the audit's "before"
	if err != nil {
		return err
	}
	item, err := s.t.TxPut(schema.SLASettingsItem{Key: schema.SLASettingsKey(companyID), DaysToFix: st.DaysToFix, DueSoonDays: st.DueSoonDays,
		AcceptanceDays: st.AcceptanceDays, DismissalRulesNeedApproval: st.DismissalRulesNeedApproval, UpdatedAt: s.t.Stamp()}, nil)
	if err != nil {
		return err
	}
	changes := map[string]ledger.Change{}
	if !maps.Equal(before.DaysToFix, st.DaysToFix) {
		changes["days_to_fix"] = ledger.Change{Before: before.DaysToFix, After: st.DaysToFix}
	}
	if before.DueSoonDays != st.DueSoonDays {
		changes["due_soon_days"] = ledger.Change{Before: before.DueSoonDays, After: st.DueSoonDays}
	}
	if before.AcceptanceDays != st.AcceptanceDays {
		changes["risk_acceptance_days"] = ledger.Change{Before: before.AcceptanceDays, After: st.AcceptanceDays}
	}
	if before.DismissalRulesNeedApproval != st.DismissalRulesNeedApproval {
		changes["dismissal_rules_require_approval"] = ledger.Change{Before: before.DismissalRulesNeedApproval, After: st.DismissalRulesNeedApproval}
	}
	audit, err := s.l.TxAudit(ctx, companyID, ledger.AuditEntry{Action: "sla_settings.update", TargetType: "sla_settings", TargetID: strconv.FormatInt(companyID, 10), Changes: changes})
	if err != nil {
		return err
	}
	return s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...))
}
