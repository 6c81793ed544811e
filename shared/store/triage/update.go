package triage

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

// edit is what one read-change-commit makes of the issues it read: the
// changes, through the issue write path, and the items that go with them
// in their first transaction (written alone when there is no change).
type edit struct {
	changes []findings.IssueChange
	items   []types.TransactWriteItem
}

// plan says what an attempt changes of the issues it read (an id not found
// is absent from got), knowing how many changes earlier attempts of the
// same update committed.
type plan func(got map[string]findings.Issue, committed int) (edit, error)

// update is the read-change-commit loop over issues of the company: it
// reads ids consistently, asks p what changes, and commits that (see
// commit), all again on a conflict (ErrConflict; at most ddb.MaxAttempts
// attempts): a change an earlier attempt committed is read back as it now
// is, so p does not make it twice. It then settles the counters of the
// issues it changed, and answers the changes committed across attempts.
func (x *Triage) update(ctx context.Context, companyID int64, ids []string, p plan) ([]findings.IssueChange, error) {
	var done []findings.IssueChange
	err := x.t.Retrying(ctx, func() error {
		e, n, err := x.attempt(ctx, companyID, ids, p, len(done))
		done = append(done, e.changes[:n]...)
		return err
	})
	if err != nil {
		return done, err
	}
	return done, x.settle(ctx, companyID, done)
}

// updateOne is update over the company's issue id, which p gets as it now
// is: ErrNotFound when the company has no such issue.
func (x *Triage) updateOne(ctx context.Context, companyID int64, id string, p func(before findings.Issue) (edit, error)) error {
	cid, ok := schema.CanonicalUUID(id)
	if !ok {
		return ddb.ErrNotFound
	}
	_, err := x.update(ctx, companyID, []string{cid}, func(got map[string]findings.Issue, _ int) (edit, error) {
		before, ok := got[cid]
		if !ok {
			return edit{}, ddb.ErrNotFound
		}
		return p(before)
	})
	return err
}

// attempt is one read-change-commit: it answers the edit p made and how
// many of its changes committed (the issue write path commits them a
// transaction at a time, the edit's items with the first). An operation's
// step is one attempt: its checkpoint says what a conflict retries.
func (x *Triage) attempt(ctx context.Context, companyID int64, ids []string, p plan, committed int) (edit, int, error) {
	got, err := findings.ByID(ctx, x.f, companyID, ids)
	if err != nil {
		return edit{}, 0, err
	}
	e, err := p(got, committed)
	if err != nil {
		return edit{}, 0, err
	}
	n, err := x.commit(ctx, companyID, e)
	return e, n, err
}

// commit writes e: its changes through the issue write path (fenced by the
// lease ctx carries, if any), e.items in their first transaction; or, with
// no change, e.items alone in one transaction (none: nothing is written).
func (x *Triage) commit(ctx context.Context, companyID int64, e edit) (int, error) {
	if len(e.changes) == 0 {
		if len(e.items) == 0 {
			return 0, nil
		}
		return 0, x.t.Transact(ctx, e.items)
	}
	return findings.Commit(ctx, x.f, companyID, e.changes, e.items...)
}

// settle settles the counters of the issues changes changed (as they were
// before), after their write.
func (x *Triage) settle(ctx context.Context, companyID int64, changes []findings.IssueChange) error {
	if len(changes) == 0 {
		return nil
	}
	before := make([]findings.Issue, len(changes))
	for n, c := range changes {
		before[n] = *c.Before
	}
	return findings.Settle(ctx, x.f, companyID, findings.CounterKeys(companyID, before))
}
