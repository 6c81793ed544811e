package triage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/triageops"
)

// triageStepIDs is the most ids one applying step reads (one BatchGetItem
// of at most 100 keys; the step's changes then fill one transaction).
const triageStepIDs = 50

// ApplyTriagePage applies the operation's status to the rest of its
// current id page through the issue write path (counters, history and
// events), a transaction at a time; each transaction also moves the
// operation's checkpoint and adds what it processed and changed, on the
// condition that the checkpoint is still the one it started from. It
// returns the operation as it then stands (on the next page, or with
// Page == Pages once every page is applied). An issue already in the
// status is processed but not changed; one deleted since it matched is
// processed only. When another delivery of the operation moved the
// checkpoint first, it returns the operation as that one left it.
func (x *Triage) ApplyTriagePage(ctx context.Context, op triageops.Op) (triageops.Op, error) {
	if op.State != triageops.Applying || op.Page >= op.Pages {
		return op, nil
	}
	if !slices.Contains(findings.ManualStatuses, op.Status) {
		return op, fmt.Errorf("status %q: %w", op.Status, ddb.ErrInvalid)
	}
	ids, err := x.ops.TriageIDs(ctx, op.CompanyID, op.ID, op.Page)
	if err != nil {
		return op, err
	}
	u := IssueUpdate{Status: &op.Status}
	if op.Reason != "" {
		u.Reason = &op.Reason
	}
	var touched []findings.Issue
	for page, conflicts := op.Page, 0; op.Page == page && op.State == triageops.Applying; {
		next, took, err := x.triageStep(ctx, op, ids, u)
		if errors.Is(err, ddb.ErrConflict) {
			again, gerr := x.ops.GetTriageOp(ctx, op.CompanyID, op.ID)
			if gerr != nil {
				return op, gerr
			}
			if again.Page != op.Page || again.Pos != op.Pos || again.State != op.State {
				op = again // another delivery took the step
				continue
			}
			// A concurrent writer of one of the issues: read them again.
			if conflicts++; conflicts == ddb.MaxAttempts {
				return op, fmt.Errorf("%w: %w", ddb.ErrUnavailable, err)
			}
			if err := ddb.Sleep(ctx, conflicts); err != nil {
				return op, err
			}
			continue
		}
		if err != nil {
			return op, err
		}
		op, conflicts = next, 0
		touched = append(touched, took...)
	}
	return op, findings.Settle(ctx, x.f, op.CompanyID, findings.CounterKeys(op.CompanyID, touched))
}

// triageStep is one transaction of ApplyTriagePage: the next ids of the
// page from op.Pos, as many as one transaction holds with the checkpoint.
// It returns the operation after the step and the issues it changed (as
// they were before).
func (x *Triage) triageStep(ctx context.Context, op triageops.Op, ids []string, u IssueUpdate) (triageops.Op, []findings.Issue, error) {
	batch := ids[op.Pos:min(op.Pos+triageStepIDs, len(ids))]
	existing, err := findings.ByID(ctx, x.f, op.CompanyID, batch)
	if err != nil {
		return op, nil, err
	}
	var changes []findings.IssueChange
	var at []int // each change's place in batch
	for n, id := range batch {
		before, ok := existing[id]
		if !ok {
			continue
		}
		if after := updated(before, u); after != before {
			changes = append(changes, findings.IssueChange{Before: &before, After: &after, By: findings.Actor{UserID: op.UserID}, Reason: after.Reason})
			at = append(at, n)
		}
	}
	// The step takes the changes that fit one transaction beside the
	// checkpoint (chunkChanges' first chunk, which commitIssues, whatever
	// order it sorts them in, commits as one) and the ids before the first
	// change left out.
	consumed := len(batch)
	if chunks := findings.ChunkChanges(op.CompanyID, changes, 1); len(chunks) > 1 {
		changes, consumed = chunks[0], at[len(chunks[0])]
	}
	took := make([]findings.Issue, len(changes))
	for n := range changes {
		took[n] = *changes[n].Before
	}
	page, pos := op.Page, op.Pos+consumed
	if pos == len(ids) {
		page, pos = page+1, 0
	}
	adv, err := x.ops.TxAdvance(op, page, pos, consumed, len(changes))
	if err != nil {
		return op, nil, err
	}
	if len(changes) == 0 {
		err = x.t.Transact(ctx, []types.TransactWriteItem{adv})
	} else {
		_, err = findings.Commit(ctx, x.f, op.CompanyID, changes, adv)
	}
	if err != nil {
		return op, nil, err
	}
	op.Page, op.Pos = page, pos
	op.Processed += int64(consumed)
	op.Changed += int64(len(took))
	return op, took, nil
}
