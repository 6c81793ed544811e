package triage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// triageStepIDs is the most ids one applying step reads (one BatchGetItem
// of at most 100 keys; the step's changes then fill one transaction).
const triageStepIDs = 50

// step is one transaction of an operation's page: it applies the next ids
// of the page from op.Pos (at most triageStepIDs, stepBatch), moves the
// checkpoint in the same transaction (TxAdvance), and returns the operation after it and
// the issues it changed (as they were before; none for SCA findings, which
// have no status counters). ErrConflict when the checkpoint or one of the
// items read changed meanwhile.
type step func(ctx context.Context, op schema.TriageOpItem, ids []string) (schema.TriageOpItem, []findings.Issue, error)

// ApplyTriagePage applies the operation's change to the rest of its
// current id page through the issue write path (counters, history and
// events), a transaction at a time; each transaction also moves the
// operation's checkpoint and adds what it processed and changed, on the
// condition that the checkpoint is still the one it started from. It
// returns the operation as it then stands (on the next page, or with
// Page == Pages once every page is applied). A bulk triage sets its status,
// reason and terms: an issue already so is processed but not changed. A
// rule's application gives the rule's action to the issues it still
// changes (appliesTo), by the rule, and its status to the SCA findings of
// a page of them (sca.RuleWrites); it ends with ErrRuleGone or
// ErrRuleInactive when the rule was deleted or disabled meanwhile. An issue
// deleted since it matched is processed only. When another delivery of the
// operation moved the checkpoint first, it returns the operation as that
// one left it.
func (x *Triage) ApplyTriagePage(ctx context.Context, op schema.TriageOpItem) (schema.TriageOpItem, error) {
	if op.State != OpApplying || op.Page >= op.Pages {
		return op, nil
	}
	ids, err := x.TriageIDs(ctx, op.CompanyID, op.ID, op.Page)
	if err != nil {
		return op, err
	}
	if op.RuleID == "" || len(ids) == 0 || !strings.HasPrefix(ids[0], sca.Marker) {
		return x.applyIssueIDs(ctx, op, ids)
	}
	r, err := x.opRule(ctx, op)
	if err != nil {
		return op, err
	}
	return x.applySteps(ctx, op, ids, x.scaStep(r))
}

// applyIssueIDs is ApplyTriagePage over a page of issue ids.
func (x *Triage) applyIssueIDs(ctx context.Context, op schema.TriageOpItem, ids []string) (schema.TriageOpItem, error) {
	var s step
	if op.RuleID != "" {
		r, err := x.opRule(ctx, op)
		if err != nil {
			return op, err
		}
		by := findings.Actor{UserID: op.UserID, RuleID: r.ID}
		s = x.issueStep(func(i findings.Issue) (findings.IssueChange, bool) {
			if !appliesTo(r, i) {
				return findings.IssueChange{}, false
			}
			after, _ := findings.Ruled(i, r)
			return findings.IssueChange{Before: &i, After: &after, By: by, Reason: findings.RuleReason(r, i)}, true
		})
	} else {
		if !slices.Contains(findings.ManualStatuses, op.Status) {
			return op, fmt.Errorf("status %q: %w", op.Status, ddb.ErrInvalid)
		}
		u := IssueUpdate{Status: &op.Status, Terms: schema.Terms{ExpiresAt: op.RiskExpiresAt, Owner: op.RiskOwner}}
		if op.Reason != "" {
			u.Reason = &op.Reason
		}
		by := findings.Actor{UserID: op.UserID}
		s = x.issueStep(func(i findings.Issue) (findings.IssueChange, bool) {
			after := updated(i, u)
			return findings.IssueChange{Before: &i, After: &after, By: by, Reason: after.Reason}, after != i
		})
	}
	return x.applySteps(ctx, op, ids, s)
}

// applySteps runs s over the rest of the operation's current page ids
// until the page is through (see ApplyTriagePage), then settles the
// counters of the issues it changed. A step that conflicts is read again:
// when another delivery took it, from where that one left off.
func (x *Triage) applySteps(ctx context.Context, op schema.TriageOpItem, ids []string, s step) (schema.TriageOpItem, error) {
	var touched []findings.Issue
	for page, conflicts := op.Page, 0; op.Page == page && op.State == OpApplying; {
		next, took, err := s(ctx, op, ids)
		if errors.Is(err, ddb.ErrConflict) {
			again, gerr := x.GetTriageOp(ctx, op.CompanyID, op.ID)
			if gerr != nil {
				return op, gerr
			}
			if !sameCheckpoint(again, op) {
				op = again // another delivery took the step
				continue
			}
			// A concurrent writer of one of the items: read them again.
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

// sameCheckpoint reports whether a and b are one checkpoint: what
// TxAdvance's condition compares.
func sameCheckpoint(a, b schema.TriageOpItem) bool {
	return a.State == b.State && a.Page == b.Page && a.Pos == b.Pos && a.Processed == b.Processed && a.Changed == b.Changed
}

// stepBatch is the ids the step at op.Pos reads.
func stepBatch(op schema.TriageOpItem, ids []string) []string {
	return ids[op.Pos:min(op.Pos+triageStepIDs, len(ids))]
}

// advanced is op after a step that processed consumed ids of the page and
// changed changed of them.
func advanced(op schema.TriageOpItem, pages int, consumed, changed int) schema.TriageOpItem {
	op.Pos += consumed
	if op.Pos == pages {
		op.Page, op.Pos = op.Page+1, 0
	}
	op.Processed += int64(consumed)
	op.Changed += int64(changed)
	return op
}

// issueStep is a step over issues, one read-change-commit (attempt):
// change says what it makes of an issue and whether it changes it. See
// stepChunk for why the step is one transaction.
func (x *Triage) issueStep(change func(findings.Issue) (findings.IssueChange, bool)) step {
	return func(ctx context.Context, op schema.TriageOpItem, ids []string) (schema.TriageOpItem, []findings.Issue, error) {
		batch := stepBatch(op, ids)
		var next schema.TriageOpItem
		e, _, err := x.attempt(ctx, op.CompanyID, batch, func(got map[string]findings.Issue, _ int) (edit, error) {
			changes, at, err := x.stepChanges(ctx, op.CompanyID, batch, got, change)
			if err != nil {
				return edit{}, err
			}
			changes, consumed := stepChunk(op.CompanyID, changes, at, len(batch))
			next = advanced(op, len(ids), consumed, len(changes))
			adv, err := x.TxAdvance(op, next)
			return edit{changes: changes, items: []types.TransactWriteItem{adv}}, err
		}, 0)
		if err != nil {
			return op, nil, err
		}
		took := make([]findings.Issue, len(e.changes))
		for n := range e.changes {
			took[n] = *e.changes[n].Before
		}
		return next, took, nil
	}
}

// scaStep is a step over SCA findings: it gives r's status to those of the
// batch it still changes (sca.RuleWrites, each conditional on what it
// read), in one transaction with the checkpoint.
func (x *Triage) scaStep(r triagemodel.Rule) step {
	return func(ctx context.Context, op schema.TriageOpItem, ids []string) (schema.TriageOpItem, []findings.Issue, error) {
		batch := stepBatch(op, ids)
		items, err := x.sca.RuleWrites(ctx, op.CompanyID, r, batch)
		if err != nil {
			return op, nil, err
		}
		next := advanced(op, len(ids), len(batch), len(items))
		adv, err := x.TxAdvance(op, next)
		if err != nil {
			return op, nil, err
		}
		if err := x.t.Transact(ctx, append(items, adv)); err != nil {
			return op, nil, err
		}
		return next, nil, nil
	}
}

// stepChanges answers the changes change makes of the issues of batch
// (got: as read), with their acceptance terms settled as their write will
// settle them (so their items are counted as written: settling may give a
// change a history entry), and each change's place in batch.
func (x *Triage) stepChanges(ctx context.Context, companyID int64, batch []string, got map[string]findings.Issue, change func(findings.Issue) (findings.IssueChange, bool)) ([]findings.IssueChange, []int, error) {
	var changes []findings.IssueChange
	var at []int
	for n, id := range batch {
		before, ok := got[id]
		if !ok {
			continue // deleted since it matched: processed only
		}
		if c, ok := change(before); ok {
			changes = append(changes, c)
			at = append(at, n)
		}
	}
	// Settling again at the commit keeps what this settled (the terms it
	// gives carry their own accepted_at).
	if err := findings.SettleTerms(ctx, x.f, companyID, changes, x.t.Stamp()); err != nil {
		return nil, nil, err
	}
	return changes, at, nil
}

// stepChunk is the part of a step's changes that one transaction holds
// beside the checkpoint, and how many ids of the batch (of size ids) the
// step consumes: all of them when every change fits, else those before
// the first change left out (at: each change's place in the batch).
//
// This is what makes an operation's counts exact: the step's issue
// changes (each its issue, history entry and events), the counters and
// trend records they move, and the checkpoint advance that counts exactly
// them (position in the page, processed, changed) commit in one
// transaction, conditional on the previous checkpoint, or not at all. A
// page larger than a transaction is so applied a chunk at a time, each
// chunk moving the position within the page. commitIssues splits changes
// that do not fit one transaction into several, only the first carrying
// the checkpoint: a worker dying between them would leave the checkpoint
// counting changes that never committed, and skipping them on resume. So
// the chunk is sized here as commitIssues sizes it, on changes already
// settled as it settles them (ChunkChanges' total is the same in any
// order, so its sorting does not split the chunk either).
func stepChunk(companyID int64, changes []findings.IssueChange, at []int, ids int) ([]findings.IssueChange, int) {
	chunks := findings.ChunkChanges(companyID, changes, 1)
	if len(chunks) <= 1 {
		return changes, ids
	}
	return chunks[0], at[len(chunks[0])]
}
