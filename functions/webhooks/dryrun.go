package webhooks

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/eventfilter"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
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

// dryRunRequest is what a dry run was asked.
type dryRunRequest struct {
	src   string // the filter's source
	types []string
	limit int
}

// dryRunTotals counts a dry run's events.
type dryRunTotals struct {
	Events      int `json:"events"`
	Selected    int `json:"selected"`
	NotSelected int `json:"not_selected"`
	Errors      int `json:"errors"`
}

// dryRun answers which of the company's recent events (the recent-event
// index the dispatcher keeps: the last 7 days) a filter would have
// selected, and the totals. It changes nothing; the audit log records it.
func (h handlers) dryRun(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	req, err := readDryRun(r)
	if err != nil {
		return err
	}
	f, err := eventfilter.Compile(req.src)
	if err != nil {
		return err
	}
	evs, err := h.store.Deliveries.RecentEvents(r.Context(), p.CompanyID, h.now().Add(-DryRunWindow), req.types, req.limit)
	if err != nil {
		return err
	}
	out, totals, err := h.evaluate(r.Context(), f, deliveryengine.SeesFindings(req.src), evs)
	if err != nil {
		return err
	}
	// A read, audited as the other admin calls are: who tried which
	// expression over the company's events.
	err = h.store.Ledger.Audit(r.Context(), p.CompanyID, ledger.AuditEntry{Action: "webhook.filter_dry_run", TargetType: "webhook_filter", TargetID: "dry-run",
		Changes: map[string]ledger.Change{"filter": {After: req.src}, "events": {After: totals.Events}, "selected": {After: totals.Selected}}})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "events": out, "totals": totals})
}

// readDryRun checks a dry run's body: filter (required), types, limit.
func readDryRun(r *http.Request) (dryRunRequest, error) {
	req := dryRunRequest{limit: DefaultDryRunLimit}
	body, err := httpapi.DecodeJSONObject(r)
	if err != nil {
		return req, err
	}
	allowed := []string{"filter", "types", "limit"}
	for _, name := range slices.Sorted(maps.Keys(body)) {
		if !slices.Contains(allowed, name) {
			return req, httpapi.Invalid("Unknown field %q (allowed: %s)", name, joinQuoted(allowed))
		}
	}
	raw, ok := body["filter"]
	if !ok {
		return req, httpapi.Invalid("filter is required")
	}
	if req.src, err = parseFilter(raw); err != nil {
		return req, err
	}
	if raw, ok := body["types"]; ok {
		if req.types, err = parseTypes(raw); err != nil {
			return req, err
		}
	}
	if raw, ok := body["limit"]; ok {
		if json.Unmarshal(raw, &req.limit) != nil || req.limit < 1 || req.limit > MaxDryRunLimit {
			return req, httpapi.Invalid("limit must be an integer from 1 to %d", MaxDryRunLimit)
		}
	}
	return req, nil
}

// evaluate runs f on each event, reading a scan's new issues only when
// the expression can see them (findings): each event's outcome, with a
// failed evaluation's class (never its text), and the totals.
func (h handlers) evaluate(ctx context.Context, f *eventfilter.Filter, findings bool, evs []schema.Event) ([]dryRunEvent, dryRunTotals, error) {
	var src eventfilter.Source
	if findings {
		src = h.store.Lists
	}
	out := make([]dryRunEvent, 0, len(evs))
	var t dryRunTotals
	for _, ev := range evs {
		fe, err := eventfilter.Build(ctx, src, ev)
		if err != nil {
			return nil, t, err
		}
		v := dryRunEvent{EventID: ev.ID, Type: ev.Type, CreatedAt: ev.CreatedAt.UTC().Format(time.RFC3339)}
		ok, err := f.Match(fe)
		switch {
		case err != nil:
			class := eventfilter.Failure(err)
			v.Error = &class
			t.Errors++
		case ok:
			v.Selected = true
			t.Selected++
		}
		out = append(out, v)
	}
	t.Events, t.NotSelected = len(out), len(out)-t.Selected
	return out, t, nil
}
