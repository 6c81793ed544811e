package issues

import (
	"context"
	"net/http"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
)

// scaJSON is an SCA finding as every route shows it: the stored finding,
// the triage rule that gave its status (null: none), and its SLA, computed
// at read time (store.SCAIssue.Deadline), both null when it has no
// deadline (it is not open).
type scaJSON struct {
	sca.Issue
	Reason       *string `json:"reason"`
	TriageRuleID *string `json:"triage_rule_id"`
	SLADeadline  *string `json:"sla_deadline"`
	// SLAStatus is on_track before the deadline, overdue from it.
	SLAStatus *string `json:"sla_status"`
	// Tickets are the tickets that list the finding (docs/tickets.md),
	// empty when none.
	Tickets []storetickets.TicketView `json:"tickets"`
}

// renderSCA shows findings of the company with their SLA at the handlers'
// now, reading the company's SLA settings once for all of them.
func (h handlers) renderSCA(ctx context.Context, companyID int64, found []sca.Issue) ([]scaJSON, error) {
	settings, _, err := h.store.Catalog.SLASettings(ctx, companyID)
	if err != nil {
		return nil, err
	}
	now := h.now()
	out := make([]scaJSON, len(found))
	for n, i := range found {
		out[n].Issue, out[n].Reason, out[n].TriageRuleID = i, optional(i.Reason), optional(i.TriageRuleID)
		out[n].Sources = i.SourceList() // one finding per vulnerability: the scanners reporting it
		out[n].Tickets = []storetickets.TicketView{}
		if due, ok := i.Deadline(settings); ok {
			status := sla.StatusAt(due, settings, now)
			at := due.Format(time.RFC3339)
			out[n].SLADeadline, out[n].SLAStatus = &at, &status
		}
	}
	return out, h.withSCATickets(ctx, companyID, out)
}

// withSCATickets fills the tickets of each SCA finding of out: a ticket
// link names an SCA finding as storetickets.SCAPrefix and its id.
func (h handlers) withSCATickets(ctx context.Context, companyID int64, out []scaJSON) error {
	if len(out) == 0 {
		return nil
	}
	ids := make([]string, len(out))
	for n, i := range out {
		ids[n] = storetickets.SCAPrefix + i.ID
	}
	got, err := h.tickets.TicketsOfIssues(ctx, companyID, ids)
	if err != nil {
		return err
	}
	for n := range out {
		if t := got[ids[n]]; len(t) > 0 {
			out[n].Tickets = t
		}
	}
	return nil
}

// writeSCA answers one finding of the company, with its SLA.
func (h handlers) writeSCA(ctx context.Context, w http.ResponseWriter, companyID int64, i sca.Issue) error {
	out, err := h.renderSCA(ctx, companyID, []sca.Issue{i})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "issue": out[0]})
}

// writeSCAPage answers a page of SCA findings shown with their SLA, as the
// page read answers it (the page or its error).
func (h handlers) writeSCAPage(w http.ResponseWriter, r *http.Request, pg httpapi.Paging) func(page.Page[sca.Issue], error) error {
	return func(found page.Page[sca.Issue], err error) error {
		if err != nil {
			return err
		}
		out, err := h.renderSCA(r.Context(), auth.FromContext(r.Context()).CompanyID, found.Items)
		if err != nil {
			return err
		}
		return httpapi.WriteList(w, pg, issueList, page.Page[scaJSON]{Items: out, Offset: found.Offset, Next: found.Next, Total: found.Total})
	}
}
