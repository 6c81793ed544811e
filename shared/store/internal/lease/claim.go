package lease

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// A claim is the short lease of a link to something outside (a comment on
// a pull request, a ticket): one attempt at a time posts it, and a claim
// whose holder died runs out. Unlike Take, a claim neither waits nor
// fences: an attempt that finds the link claimed gives up (ErrClaimed) and
// is retried later, and what it records when it gives the claim back is
// conditional on still holding it.

// ErrClaimed is Claim's and Unclaim's answer while another owner's claim
// runs (or, to Unclaim, after it ran out and another took it).
var ErrClaimed = errors.New("claimed by another owner")

// Claim makes owner the holder of the item at k until now+d, creating the
// item, unless another owner's claim runs. set adds to the update (what a
// new item needs besides its key); rv says which image of the item Claim
// returns (ALL_NEW: as it is now; ALL_OLD: as an earlier attempt left it).
func Claim(ctx context.Context, t *ddb.Table, k ddb.Key, owner string, now time.Time, d time.Duration,
	set func(expression.UpdateBuilder) expression.UpdateBuilder, rv types.ReturnValue) (map[string]types.AttributeValue, error) {
	lo, lu := expression.Name("lease_owner"), expression.Name("lease_until")
	free := expression.AttributeNotExists(expression.Name("PK")).Or(expression.AttributeNotExists(lo)).
		Or(lo.Equal(expression.Value(owner))).Or(lu.LessThan(expression.Value(ddb.SortableTime(now))))
	upd := expression.Set(lo, expression.Value(owner)).Set(lu, expression.Value(ddb.SortableTime(now.Add(d))))
	if set != nil {
		upd = set(upd)
	}
	expr, err := expression.NewBuilder().WithCondition(free).WithUpdate(upd).Build()
	if err != nil {
		return nil, err
	}
	in := ddb.UpdateInput(t.Name, k, expr, rv)
	res, err := ddb.Call(func() (*dynamodb.UpdateItemOutput, error) { return t.DB.UpdateItem(ctx, in) })
	if ddb.IsConditionFailed(err) {
		return nil, ErrClaimed
	}
	if err != nil {
		return nil, err
	}
	return res.Attributes, nil
}

// Unclaimed is upd that also gives the claim back.
func Unclaimed(upd expression.UpdateBuilder) expression.UpdateBuilder {
	return upd.Remove(expression.Name("lease_owner")).Remove(expression.Name("lease_until"))
}

// HeldBy is the condition that owner still holds the item's claim.
func HeldBy(owner string) expression.ConditionBuilder {
	return expression.Name("lease_owner").Equal(expression.Value(owner))
}

// Unclaim applies upd and gives the claim back, if owner still holds it:
// ErrClaimed when the claim ran out and another took it, or the item is
// gone.
func Unclaim(ctx context.Context, t *ddb.Table, k ddb.Key, owner string, upd expression.UpdateBuilder) error {
	held := HeldBy(owner)
	err := t.Update(ctx, k, Unclaimed(upd), &held, nil)
	if errors.Is(err, ddb.ErrConflict) || errors.Is(err, ddb.ErrNotFound) {
		return ErrClaimed
	}
	return err
}
