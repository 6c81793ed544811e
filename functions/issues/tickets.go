package issues

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
)

// Tickets on issues (docs/tickets.md): every issue answer shows the
// tickets that list the issue, read from the ticket links (two batch
// reads per page), and GET /issues takes has_ticket and ticket_state.
// Those filters read the set of ticketed issues from the links' own items
// (a link holds its state and its issues in one item), so they are exact
// without any mark on the issue items.

// ticketReads is what the issue answers read of tickets.
type ticketReads interface {
	TicketsOfIssues(ctx context.Context, companyID int64, ids []string) (map[string][]storetickets.TicketView, error)
	IssuesWithTickets(ctx context.Context, companyID int64, state string) (map[string]bool, error)
}

// withTickets fills the tickets of each issue of out.
func (h handlers) withTickets(ctx context.Context, companyID int64, out []issueJSON) error {
	if len(out) == 0 {
		return nil
	}
	ids := make([]string, len(out))
	for n, i := range out {
		ids[n] = i.ID
	}
	got, err := h.tickets.TicketsOfIssues(ctx, companyID, ids)
	if err != nil {
		return err
	}
	for n := range out {
		if t := got[out[n].ID]; len(t) > 0 {
			out[n].Tickets = t
		}
	}
	return nil
}

// ticketFilter is GET /issues's has_ticket and ticket_state.
type ticketFilter struct {
	set       bool
	hasTicket bool
	state     string // "" any
}

func parseTicketFilter(q url.Values) (ticketFilter, error) {
	var f ticketFilter
	if v := q.Get("has_ticket"); v != "" {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return f, httpapi.Invalid("has_ticket must be true or false")
		}
		f.set, f.hasTicket = true, b
	}
	if v := q.Get("ticket_state"); v != "" {
		v = strings.ToLower(strings.TrimSpace(v))
		if v != storetickets.StateOpen && v != storetickets.StateClosed {
			return f, httpapi.Invalid("ticket_state must be open or closed")
		}
		if f.set && !f.hasTicket {
			return f, httpapi.Invalid("ticket_state lists issues with a ticket: has_ticket must be true or absent")
		}
		f.set, f.hasTicket, f.state = true, true, v
	}
	return f, nil
}

// listIssues is ListIssues with the ticket filters: the issues among the
// ticketed ones, or all but them (paged by number only).
func (h handlers) listIssues(ctx context.Context, companyID int64, f issuelists.IssueFilter, tf ticketFilter, q page.Request) (page.Page[findings.Issue], error) {
	if !tf.set {
		return h.store.Lists.ListIssues(ctx, companyID, f, q)
	}
	if q.Token != "" {
		return page.Page[findings.Issue]{}, httpapi.Invalid("has_ticket and ticket_state page by number (page), not by page token")
	}
	ticketed, err := h.tickets.IssuesWithTickets(ctx, companyID, tf.state)
	if err != nil {
		return page.Page[findings.Issue]{}, err
	}
	if tf.hasTicket {
		ids := make([]string, 0, len(ticketed))
		for id := range ticketed {
			ids = append(ids, id)
		}
		return h.store.Lists.ListIssuesAmong(ctx, companyID, f, ids, q)
	}
	if q.Offset+q.Limit > issuelists.MaxTicketWalk {
		return page.Page[findings.Issue]{}, httpapi.Invalid("has_ticket=false lists at most the first %d issues; narrow the filters", issuelists.MaxTicketWalk)
	}
	return h.store.Lists.ListIssuesWithout(ctx, companyID, f, ticketed, q)
}
