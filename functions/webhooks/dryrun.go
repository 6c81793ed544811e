package webhooks

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/delivery"
	"github.com/acme/codescan-api/shared/eventfilter"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store"
)

// Dry-run bounds: the events looked at (newest first), and how far back.
const (
	DefaultDryRunLimit = 50
	MaxDryRunLimit     = 200
	DryRunWindow       = 7 * 24 * time.Hour
)

type dryRunEvent struct {
	EventID   string  `json:"event_id"`
	Type      string  `json:"type"`
	CreatedAt string  `json:"created_at"`
	Selected  bool    `json:"selected"`
	Error     *string `json:"error"`
}

// dryRun answers which of the company's recent events (the recent-event
// index the dispatcher keeps: the last 7 days) a filter would have
// selected, and the totals. It changes nothing; the audit log records it.
func (h handlers) dryRun(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	body, err := httpapi.DecodeJSONObject(r)
	if err != nil {
		return err
	}
	allowed := []string{"filter", "types", "limit"}
	for _, name := range slices.Sorted(maps.Keys(body)) {
		if !slices.Contains(allowed, name) {
			return httpapi.Errorf(http.StatusBadRequest, "Unknown field %q (allowed: %s)", name, joinQuoted(allowed))
		}
	}
	raw, ok := body["filter"]
	if !ok {
		return httpapi.Errorf(http.StatusBadRequest, "filter is required")
	}
	src, err := parseFilter(raw)
	if err != nil {
		return err
	}
	f, err := eventfilter.Compile(src)
	if err != nil {
		return err
	}
	var types []string
	if raw, ok := body["types"]; ok {
		if types, err = parseTypes(raw); err != nil {
			return err
		}
	}
	limit := DefaultDryRunLimit
	if raw, ok := body["limit"]; ok {
		if json.Unmarshal(raw, &limit) != nil || limit < 1 || limit > MaxDryRunLimit {
			return httpapi.Errorf(http.StatusBadRequest, "limit must be an integer from 1 to %d", MaxDryRunLimit)
		}
	}
	evs, err := h.store.RecentEvents(r.Context(), p.CompanyID, h.now().Add(-DryRunWindow), types, limit)
	if err != nil {
		return err
	}
	// A scan's new issues are read only when the expression can see them.
	var src2 eventfilter.Source
	if delivery.SeesFindings(src) {
		src2 = h.store
	}
	out := make([]dryRunEvent, 0, len(evs))
	selected, failed := 0, 0
	for _, ev := range evs {
		fe, err := eventfilter.Build(r.Context(), src2, ev)
		if err != nil {
			return err
		}
		v := dryRunEvent{EventID: ev.ID, Type: ev.Type, CreatedAt: ev.CreatedAt.UTC().Format(time.RFC3339)}
		ok, err := f.Match(fe)
		switch {
		case err != nil:
			msg := "evaluation_error"
			if strings.Contains(err.Error(), "cost limit") {
				msg = "cost_limit"
			}
			v.Error = &msg
			failed++
		case ok:
			v.Selected = true
			selected++
		}
		out = append(out, v)
	}
	// A read, audited as the other admin calls are: who tried which
	// expression over the company's events.
	err = h.store.Audit(r.Context(), p.CompanyID, store.AuditEntry{Action: "webhook.filter_dry_run", TargetType: "webhook_filter", TargetID: "dry-run",
		Changes: map[string]store.Change{"filter": {After: src}, "events": {After: len(out)}, "selected": {After: selected}}})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"status": "ok", "events": out,
		"totals": map[string]int{"events": len(out), "selected": selected, "not_selected": len(out) - selected, "errors": failed},
	})
}
