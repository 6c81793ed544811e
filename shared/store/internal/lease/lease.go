// Package lease makes one writer at a time the holder of an item (the
// findings' branch heads): a holder takes the lease under a token of its
// own, keeps it while it works, and gives it up. A holder that dies stops
// extending it, and the lease expires.
package lease

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// Timing: how long a lease holds without being extended (a dead holder
// blocks the item this long at most), and how long Take waits for another
// holder.
const (
	For  = 60 * time.Second
	Wait = 20 * time.Second
)

// Grace is how long a holder whose failure cut writes off keeps the lease
// (see Release): a write it had under way may still land (the server
// finishes a request its client gave up on), and the next holder must not
// read before it does.
const Grace = 3 * time.Second

// ErrBusy is Take's answer when another holder kept the item past Wait.
var ErrBusy = errors.New("held by another writer")

// Attr is an attribute a Take sets on the item in the write that takes
// it: what the holder must have made known before it writes anything
// (the findings' heads name their branch).
type Attr struct {
	Name  string
	Value any
}

// Take makes owner the holder of the item at k, creating it if needed,
// waiting up to Wait for another holder, and moves the item's epoch (see
// Fence), setting also in the same write; it decodes the item as it was
// into out.
func Take(ctx context.Context, t *ddb.Table, k ddb.Key, owner string, out any, also ...Attr) error {
	deadline := t.Clock().Add(Wait)
	for attempt := 0; ; attempt++ {
		now := t.Clock()
		upd := expression.Set(expression.Name("lease_owner"), expression.Value(owner)).
			Set(expression.Name("lease_until"), expression.Value(now.Add(For).UnixMilli())).
			Add(expression.Name(epochAttr), expression.Value(1))
		for _, a := range also {
			upd = upd.Set(expression.Name(a.Name), expression.Value(a.Value))
		}
		cond := expression.Or(expression.AttributeNotExists(expression.Name("lease_owner")),
			expression.Name("lease_until").LessThan(expression.Value(now.UnixMilli())))
		err := t.ConditionalUpsert(ctx, k, upd, cond, out)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, ddb.ErrConflict): // a refusal the client's retryer gave up on, too
			return err
		case t.Clock().After(deadline):
			return ErrBusy
		}
		if err := ddb.Sleep(ctx, min(attempt, 6)); err != nil {
			return err
		}
	}
}

// Keep extends owner's lease on k every third of For while it works (an
// apply of 25,000 findings takes minutes), so no other writer takes the
// item from a holder that is alive. It returns the context to work under,
// cancelled when the lease is lost (an extension refused, or none made
// for For) so that the holder stops writing, its cause ErrLost, and stop,
// which ends the extensions before the work returns.
func Keep(ctx context.Context, t *ddb.Table, k ddb.Key, owner string) (context.Context, func()) {
	work, lost := context.WithCancelCause(ctx)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(For / 3)
		defer tick.Stop()
		extended := t.Clock()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				upd := expression.Set(expression.Name("lease_until"), expression.Value(t.Clock().Add(For).UnixMilli()))
				cond := expression.Name("lease_owner").Equal(expression.Value(owner))
				err := t.Update(ctx, k, upd, &cond, nil)
				switch {
				case err == nil:
					extended = t.Clock()
				case errors.Is(err, ddb.ErrConflict), t.Clock().Sub(extended) >= For:
					lost(ErrLost)
					return
				}
			}
		}
	}()
	return work, func() { cancel(); <-done; lost(nil) }
}

// Release gives up owner's lease on k after a failure (best effort: it
// expires anyway), after Grace when the failure cut writes off.
func Release(ctx context.Context, t *ddb.Table, k ddb.Key, owner string, cutOff bool) {
	upd := expression.Remove(expression.Name("lease_owner")).Remove(expression.Name("lease_until"))
	if cutOff {
		upd = expression.Set(expression.Name("lease_until"), expression.Value(t.Clock().Add(Grace).UnixMilli()))
	}
	cond := expression.Name("lease_owner").Equal(expression.Value(owner))
	_ = t.Update(context.WithoutCancel(ctx), k, upd, &cond, nil)
}
