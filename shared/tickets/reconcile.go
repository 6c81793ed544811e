package tickets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/store/schema"
)

// ReconcileEvery is how often a ticket is compared with the tracker.
const ReconcileEvery = 24 * time.Hour

// maxReconciled bounds the tickets one company's run compares.
const maxReconciled = 2_000

// Reconciled is what one run did.
type Reconciled struct {
	Checked, Repaired, Failed int
}

// Reconcile compares a company's tickets not checked for ReconcileEvery
// with their trackers, by key, and applies what an event lost left
// behind (Apply, with the history saying it came from the
// reconciliation). A tracker that cannot be reached is counted and left
// for the next run.
func (d *Ticketer) Reconcile(ctx context.Context, companyID int64) (Reconciled, error) {
	var out Reconciled
	links, err := d.Tickets.Links(ctx, companyID)
	if err != nil {
		return out, err
	}
	due := d.now().Add(-ReconcileEvery)
	var errs []error
	for _, l := range links {
		if out.Checked >= maxReconciled {
			break
		}
		if at, err := time.Parse(time.RFC3339, l.CheckedAt); err == nil && at.After(due) {
			continue
		}
		out.Checked++
		repaired, err := d.reconcileOne(ctx, companyID, l)
		switch {
		case err != nil:
			out.Failed++
			errs = append(errs, fmt.Errorf("ticket %s: %w", l.TicketKey, err))
		case repaired:
			out.Repaired++
		}
	}
	if out.Failed == out.Checked && out.Failed > 0 {
		return out, errors.Join(errs...)
	}
	return out, nil
}

func (d *Ticketer) reconcileOne(ctx context.Context, companyID int64, l schema.TicketLink) (bool, error) {
	tr, gone, err := d.linkTracker(ctx, companyID, l)
	if err != nil || gone != "" {
		if err == nil {
			err = errors.New(gone)
		}
		return false, err
	}
	remote, err := tr.Get(ctx, l)
	if err != nil {
		return false, err
	}
	res, err := d.Apply(ctx, Change{CompanyID: companyID, Integration: l.Integration, TicketKey: l.TicketKey, Remote: remote,
		Source: "reconciliation of " + SourceOf(l)})
	if err != nil {
		return false, err
	}
	if res == Applied {
		return true, nil
	}
	fresh, err := d.Tickets.GetLink(ctx, companyID, l.ID)
	if err != nil {
		return false, err
	}
	_, err = d.Tickets.SetState(ctx, fresh, fresh.State, fresh.Resolution, false) // checked now
	return false, err
}
