package scheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/acme/codescan-api/shared/deliveryengine"
	ticketing "github.com/acme/codescan-api/shared/tickets"
)

// Companies lists the companies a job runs for.
type Companies interface {
	CompanyIDs(ctx context.Context) ([]int64, error)
}

// ReconcileTickets is the daily tickets job (job "tickets"): each
// company's tickets not compared with their tracker for a day are read
// back by key and what a lost event left behind is applied
// (shared/tickets Reconcile). It returns how many tickets it repaired; a
// company whose trackers cannot be reached is reported and the others
// still run.
func ReconcileTickets(ctx context.Context, st Companies, t *ticketing.Ticketer) (int, error) {
	if t == nil {
		return 0, errors.New("no tickets channel on the delivery engine")
	}
	ids, err := st.CompanyIDs(ctx)
	if err != nil {
		return 0, err
	}
	repaired := 0
	var errs []error
	for _, id := range ids {
		r, err := t.Reconcile(ctx, id)
		repaired += r.Repaired
		if err != nil {
			errs = append(errs, fmt.Errorf("company %d: %w", id, err))
		}
	}
	return repaired, errors.Join(errs...)
}

// TicketerOf is the tickets channel among the engine's outbound channels
// (nil when it has none).
func TicketerOf(d *deliveryengine.Engine) *ticketing.Ticketer {
	for _, ch := range d.Outbound {
		if t, ok := ch.(*ticketing.Ticketer); ok {
			return t
		}
	}
	return nil
}
