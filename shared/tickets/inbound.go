package tickets

import (
	"context"
	"errors"
	"fmt"

	"github.com/acme/codescan-api/shared/store"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
)

// Change is a tracker's report of a ticket's state: a verified inbound
// event, or what the reconciliation read.
type Change struct {
	CompanyID   int64
	Integration string // the link's integration uuid
	TicketKey   string // owner/repo#12, ABC-12
	Remote      Remote
	// Source names where the change came from in the findings' history:
	// "Jira ABC-12", "GitHub issue o/r#12".
	Source string
}

// Results of Apply.
const (
	Applied   = "applied"
	Unchanged = "unchanged" // the link already says so (our own echo, a redelivery)
	Unknown   = "unknown"   // no ticket of ours
)

// SourceOf names a link's ticket for the history.
func SourceOf(l storetickets.Link) string {
	if l.System == SystemJira {
		return "Jira " + l.TicketKey
	}
	return "GitHub issue " + l.TicketKey
}

// Apply takes a ticket's new state to its findings, through the one issue
// write path: closed as won't do accepts the risk of its open findings
// (the ticket as reason, the company's default end); closed as done
// leaves them as they are until a scan confirms the fix (the ticket reads
// fix_in_progress); reopened reopens the findings the ticket accepted. A
// state the link already holds changes nothing: our own changes come back
// as such echoes.
func (d *Ticketer) Apply(ctx context.Context, ch Change) (string, error) {
	l, err := d.Tickets.LinkByKey(ctx, ch.CompanyID, ch.Integration, ch.TicketKey)
	if errors.Is(err, storetickets.ErrNotFound) {
		return Unknown, nil
	} else if err != nil {
		return "", err
	}
	if ch.Remote.State == l.State && ch.Remote.Resolution == l.Resolution {
		return Unchanged, nil
	}
	if ch.Remote.State == storetickets.StateClosed && ch.Remote.Resolution == storetickets.ResolutionDone &&
		l.State == storetickets.StateClosed && l.Synced == storetickets.StateClosed {
		return Unchanged, nil // we closed it as fixed
	}
	if ch.Source == "" {
		ch.Source = SourceOf(l)
	}
	switch {
	case ch.Remote.State == storetickets.StateClosed && ch.Remote.Resolution == storetickets.ResolutionWont:
		err = d.triageAll(ctx, ch, l, "accepted_risk", fmt.Sprintf("Won't fix: the ticket was closed as won't do (from %s)", ch.Source), Open)
	case ch.Remote.State == storetickets.StateOpen && l.Resolution == storetickets.ResolutionWont:
		err = d.triageAll(ctx, ch, l, "open", fmt.Sprintf("The ticket was reopened (from %s)", ch.Source),
			func(s string) bool { return s == "accepted_risk" })
	}
	if err != nil {
		return "", err
	}
	if _, err := d.Tickets.SetState(ctx, l, ch.Remote.State, ch.Remote.Resolution, false); err != nil {
		return "", err
	}
	return Applied, nil
}

// triageAll gives every finding of the ticket whose status pick takes the
// status, as a decision for the finding's project (scope project), with
// no person behind it: the reason names the ticket.
func (d *Ticketer) triageAll(ctx context.Context, ch Change, l storetickets.Link, status, reason string, pick func(string) bool) error {
	for _, id := range l.IssueIDs {
		i, err := d.Store.GetIssue(ctx, ch.CompanyID, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if !pick(i.Status) {
			continue
		}
		upd := store.IssueUpdate{Status: &status, Reason: &reason}
		if _, err := d.Store.DecideIssue(ctx, ch.CompanyID, id, upd, store.DecisionProject, store.Actor{}); err != nil {
			return fmt.Errorf("finding %s: %w", id, err)
		}
	}
	return nil
}
