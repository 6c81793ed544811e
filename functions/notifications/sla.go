package notifications

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Bounds of SLA settings.
const (
	MaxDaysToFix   = 3650
	MaxDueSoonDays = 365
)

type slaView struct {
	DaysToFix          map[string]int `json:"days_to_fix"`
	DueSoonDays        int            `json:"due_soon_days"`
	RiskAcceptanceDays int            `json:"risk_acceptance_days"`
	// DismissalRulesRequireApproval: triage rules that dismiss act only
	// once an admin other than their author approves them.
	DismissalRulesRequireApproval bool   `json:"dismissal_rules_require_approval"`
	Source                        string `json:"source"` // platform (the defaults) or company
}

func (h handlers) getSLA(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	s, set, err := h.store.Catalog.SLASettings(r.Context(), p.CompanyID)
	if err != nil {
		return err
	}
	return writeSLA(w, s, set)
}

func writeSLA(w http.ResponseWriter, s sla.Settings, set bool) error {
	v := slaView{DaysToFix: s.DaysToFix, DueSoonDays: s.DueSoonDays, RiskAcceptanceDays: s.AcceptanceDays,
		DismissalRulesRequireApproval: s.DismissalRulesNeedApproval, Source: notify.SourcePlatform}
	if set {
		v.Source = notify.SourceCompany
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "sla_settings": v})
}

// putSLA replaces the members given (days_to_fix per urgency, due_soon_days,
// risk_acceptance_days: how long a risk accepted without an end lasts);
// members left out keep their current value.
func (h handlers) putSLA(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	body, err := httpapi.DecodeJSONObject(r)
	if err != nil {
		return err
	}
	cur, _, err := h.store.Catalog.SLASettings(r.Context(), p.CompanyID)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(body)) {
		raw := body[name]
		switch name {
		case "days_to_fix":
			var days map[string]json.RawMessage
			if json.Unmarshal(raw, &days) != nil || days == nil {
				return httpapi.Invalid("days_to_fix must be an object of urgency (CR, HI, ME, LO) to days")
			}
			for u, v := range days {
				code, ok := sla.Urgency(u)
				if !ok {
					return httpapi.Invalid("days_to_fix: unknown urgency (use CR, HI, ME, LO)")
				}
				var n int
				if json.Unmarshal(v, &n) != nil || n < 1 || n > MaxDaysToFix {
					return httpapi.Invalid("days_to_fix.%s must be an integer from 1 to %d", code, MaxDaysToFix)
				}
				cur.DaysToFix[code] = n
			}
		case "due_soon_days":
			var n int
			if json.Unmarshal(raw, &n) != nil || n < 0 || n > MaxDueSoonDays {
				return httpapi.Invalid("due_soon_days must be an integer from 0 to %d", MaxDueSoonDays)
			}
			cur.DueSoonDays = n
		case "risk_acceptance_days":
			var n int
			if json.Unmarshal(raw, &n) != nil || n < 1 || n > schema.MaxAcceptanceDays {
				return httpapi.Invalid("risk_acceptance_days must be an integer from 1 to %d", schema.MaxAcceptanceDays)
			}
			cur.AcceptanceDays = n
		case "dismissal_rules_require_approval":
			if json.Unmarshal(raw, &cur.DismissalRulesNeedApproval) != nil {
				return httpapi.Invalid("dismissal_rules_require_approval must be true or false")
			}
		default:
			return httpapi.Invalid("Unknown field %q (allowed: days_to_fix, due_soon_days, risk_acceptance_days, dismissal_rules_require_approval)", name)
		}
	}
	if err := h.store.Catalog.PutSLASettings(r.Context(), p.CompanyID, cur); err != nil {
		return err
	}
	return writeSLA(w, cur, true)
}
