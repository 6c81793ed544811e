package issuelists

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Issues written before the due and Offset indexes held them (a deployed
// table, a `make run` data directory) lack their keys. BackfillDueIndex
// sets them, once per table: one state item records how far it got (company, issue shard), so
// a run cut short (a Lambda's timeout) resumes there, and done once every
// company is through. It is a job, never a step of a read: the scheduler's
// SLA and digest jobs call it first (after it is done it costs them one
// read), the dev server runs it to the end on start, and
// bulkload.CreateTable marks a table it creates done (its issues are all
// written with the keys). The issue lists read the Offset index without
// asking, so the backfill must be done before a version that reads it
// serves a table written before the index (docs/deploying.md says how).

// backfillSaveEvery is how many shards the backfill does between saves of
// its progress: a resumed run does at most that many again.
const backfillSaveEvery = 16

// BackfillDueIndex sets the due and Offset index keys of every company's
// issues that lack them, resuming where an earlier call stopped. It stops after the
// issue shard that ends past until (the time left to the caller), and
// reports whether the backfill is complete and how many issues it wrote.
// It is idempotent: an issue whose keys are right is not written, and an
// issue a writer changed meanwhile is left to that writer, whose write
// set its keys.
func (x *Lists) BackfillDueIndex(ctx context.Context, until time.Time) (done bool, written int, err error) {
	var st schema.BackfillState
	if err := x.t.GetItem(ctx, schema.IssueKeysBackfillKey, &st); err != nil && !errors.Is(err, ddb.ErrNotFound) {
		return false, 0, err
	}
	if st.Done {
		return true, 0, nil
	}
	ids, err := x.tenancy.CompanyIDs(ctx)
	if err != nil {
		return false, 0, err
	}
	for _, id := range ids {
		if id < st.Company {
			continue
		}
		shard := 0
		if id == st.Company {
			shard = st.Shard
		}
		for ; shard < 256; shard++ {
			if x.t.Clock().After(until) {
				return false, written, nil
			}
			n, err := x.backfillShard(ctx, id, shard)
			written += n
			if err != nil {
				return false, written, err
			}
			if (shard+1)%backfillSaveEvery == 0 {
				if err := x.t.PutItem(ctx, schema.BackfillState{Key: schema.IssueKeysBackfillKey, Company: id, Shard: shard + 1}, nil); err != nil {
					return false, written, err
				}
			}
		}
	}
	return true, written, x.t.PutItem(ctx, schema.BackfillState{Key: schema.IssueKeysBackfillKey, Done: true}, nil)
}

// backfillShard sets the index keys of one issue shard of a company.
func (x *Lists) backfillShard(ctx context.Context, companyID int64, shard int) (int, error) {
	var todo []findings.Issue
	err := ddb.Each(ctx, x.t, ddb.PKBeginsWith(schema.IssueShardPK(companyID, fmt.Sprintf("%02x", shard)), ""), func(i findings.Issue) error {
		want := i
		if err := want.SetDue(&i); err != nil {
			return err
		}
		want.OffsetKeys = schema.OffsetKeys{OffsetPK: want.GSI1PK, OffsetSK: want.GSI1SK}
		if want.DuePK != i.DuePK || want.DueSK != i.DueSK || want.OffsetKeys != i.OffsetKeys {
			todo = append(todo, want)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	written := make([]bool, len(todo))
	err = x.t.Parallel(ctx, len(todo), func(n int) error {
		i := todo[n]
		upd := expression.Set(expression.Name(tabledef.Offset.PK), expression.Value(i.OffsetPK)).
			Set(expression.Name(tabledef.Offset.SK), expression.Value(i.OffsetSK))
		if i.DuePK != "" {
			upd = upd.Set(expression.Name(tabledef.Due.PK), expression.Value(i.DuePK)).
				Set(expression.Name(tabledef.Due.SK), expression.Value(i.DueSK))
		} else {
			upd = upd.Remove(expression.Name(tabledef.Due.PK)).Remove(expression.Name(tabledef.Due.SK))
		}
		// The version it was read at, as every issue write (txIssue).
		cond := expression.Name("ver").Equal(expression.Value(i.Version))
		if i.Version == 0 {
			cond = expression.AttributeNotExists(expression.Name("ver"))
		}
		err := x.t.Update(ctx, i.Key, upd, &cond, nil)
		if errors.Is(err, ddb.ErrConflict) || errors.Is(err, ddb.ErrNotFound) {
			return nil // changed or deleted since: its writer set the keys
		}
		written[n] = err == nil
		return err
	})
	n := 0
	for _, w := range written {
		if w {
			n++
		}
	}
	return n, err
}
