package triage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Bulk triage operations: one
// item per bulk triage too large to answer at once (POST /issues/triage),
// or triage rule application (POST /triage-rules/{id}/apply, RuleID set),
// whose insert the worker consumes from the table's stream, and which it
// moves through
//
//	queued -> collecting -> applying -> done | failed
//
// Collecting pages through the issue list and keeps the matched ids in id
// pages (so applying never depends on a list whose members it changes);
// applying sets the status (or the rule's action) on them a transaction
// at a time. Every step writes its checkpoint and counts conditionally on
// the checkpoint it started from, in the transaction that does its work,
// so a worker killed anywhere resumes where the last committed step left
// off, and two deliveries of one operation never do or count a step twice.

// The states of an operation.
const (
	OpQueued     = "queued"
	OpCollecting = "collecting"
	OpApplying   = "applying"
	OpDone       = "done"
	OpFailed     = "failed"
)

// OpLifetime is how long an operation and its id pages live (their TTL).
const OpLifetime = 7 * 24 * time.Hour

// CreateTriageOp stores a new bulk triage operation in state queued with
// its audit entry (issue.triage, when ctx carries an actor: one per
// operation, however many issues it changes), in one transaction. The id
// is a random uuid; CompanyID, Status, Filters and Query must be set by
// the caller.
func (x *Triage) CreateTriageOp(ctx context.Context, op schema.TriageOpItem) (schema.TriageOpItem, error) {
	if op.CompanyID <= 0 || op.Status == "" || op.Query == "" || op.RuleID != "" {
		return schema.TriageOpItem{}, errors.New("triage operation needs a company, a status and a query")
	}
	op = x.freshOp(op)
	changes := map[string]ledger.Change{"status": {After: op.Status}, "reason": {After: op.Reason}, "filters": {After: op.Filters}}
	if op.RiskExpiresAt != "" {
		changes["expires_at"] = ledger.Change{After: op.RiskExpiresAt}
	}
	if op.RiskOwner != 0 {
		changes["owner"] = ledger.Change{After: op.RiskOwner}
	}
	return op, x.createOp(ctx, op, ledger.AuditEntry{Action: "issue.triage", TargetType: "triage_operation", TargetID: op.ID, Changes: changes})
}

// CreateRuleOp stores a new operation applying the triage rule op.RuleID
// (its action, shown in the operation as Status and Reason) in state
// queued, with audit, the rule application's entry: one per operation.
func (x *Triage) CreateRuleOp(ctx context.Context, op schema.TriageOpItem, audit ledger.AuditEntry) (schema.TriageOpItem, error) {
	if op.CompanyID <= 0 || op.RuleID == "" {
		return schema.TriageOpItem{}, errors.New("rule operation needs a company and a rule")
	}
	op = x.freshOp(op)
	if audit.Changes == nil {
		audit.Changes = map[string]ledger.Change{}
	}
	audit.Changes["operation_id"] = ledger.Change{After: op.ID}
	return op, x.createOp(ctx, op, audit)
}

// freshOp is a new operation of op's request: a random id, queued.
func (x *Triage) freshOp(op schema.TriageOpItem) schema.TriageOpItem {
	now := x.t.Clock()
	op = schema.TriageOpItem{ID: uuid.NewString(), CompanyID: op.CompanyID, UserID: op.UserID, Status: op.Status, Reason: op.Reason,
		RiskExpiresAt: op.RiskExpiresAt, RiskOwner: op.RiskOwner, RuleID: op.RuleID,
		Filters: op.Filters, Query: op.Query, Entity: schema.TriageEntity, State: OpQueued,
		CreatedAt: now.UTC().Format(time.RFC3339), ExpiresAt: now.Add(OpLifetime).Unix()}
	op.Key = schema.TriageOpKey(op.CompanyID, op.ID)
	return op
}

// createOp stores op with its audit entry in one transaction.
func (x *Triage) createOp(ctx context.Context, op schema.TriageOpItem, entry ledger.AuditEntry) error {
	put, err := x.t.TxPutNew(op)
	if err != nil {
		return err
	}
	audit, err := x.l.TxAudit(ctx, op.CompanyID, entry)
	if err != nil {
		return err
	}
	return x.t.Transact(ctx, append(audit, put))
}

// GetTriageOp reads an operation of the company; ErrNotFound for an
// unknown id, one that is not a uuid, or another company's.
func (x *Triage) GetTriageOp(ctx context.Context, companyID int64, id string) (schema.TriageOpItem, error) {
	u, err := uuid.Parse(id)
	if err != nil || len(id) != 36 {
		return schema.TriageOpItem{}, ddb.ErrNotFound
	}
	var op schema.TriageOpItem
	err = x.t.GetItemConsistent(ctx, schema.TriageOpKey(companyID, u.String()), &op)
	return op, err
}

// StartTriageOp begins an attempt: a queued operation starts collecting,
// one already under way keeps its state and checkpoint; the attempt is
// counted. It answers false, and changes nothing, when the operation is
// done or failed; an operation already tried maxAttempts times is failed
// instead (each attempt resumes, so only one that keeps failing runs out).
func (x *Triage) StartTriageOp(ctx context.Context, companyID int64, id string, maxAttempts int) (schema.TriageOpItem, bool, error) {
	k := schema.TriageOpKey(companyID, id)
	var op schema.TriageOpItem
	if err := x.t.GetItemConsistent(ctx, k, &op); err != nil {
		return schema.TriageOpItem{}, false, err
	}
	if op.State == OpDone || op.State == OpFailed {
		return op, false, nil
	}
	if op.Attempt >= maxAttempts {
		return op, false, x.FailTriageOp(ctx, companyID, id, fmt.Sprintf("gave up after %d attempts", maxAttempts))
	}
	state := op.State
	if state == OpQueued {
		state = OpCollecting
	}
	upd := expression.Set(expression.Name("state"), expression.Value(state)).
		Set(expression.Name("attempt"), expression.Value(op.Attempt+1))
	cond := expression.Name("attempt").Equal(expression.Value(op.Attempt)).And(opOpen())
	err := x.t.Update(ctx, k, upd, &cond, &op)
	if errors.Is(err, ddb.ErrConflict) { // another delivery started meanwhile: it goes on
		return op, false, nil
	}
	return op, err == nil, err
}

// CollectTriageIDs records one page of the list the operation read from
// its cursor: the page's ids (kept when there are any), the cursor after
// it (next; empty when the list is through, which moves the operation to
// applying), in one transaction conditional on the cursor it read from.
// ErrConflict when another delivery recorded that page first.
func (x *Triage) CollectTriageIDs(ctx context.Context, op schema.TriageOpItem, ids []string, next string) (schema.TriageOpItem, error) {
	k := schema.TriageOpKey(op.CompanyID, op.ID)
	upd := expression.Set(expression.Name("cursor"), expression.Value(next))
	if next == "" {
		upd = upd.Set(expression.Name("state"), expression.Value(OpApplying))
	}
	if len(ids) > 0 {
		upd = upd.Set(expression.Name("pages"), expression.Value(op.Pages+1)).
			Set(expression.Name("matched"), expression.Value(op.Matched+int64(len(ids))))
	}
	cond := expression.Name("state").Equal(expression.Value(OpCollecting)).
		And(expression.Name("pages").Equal(expression.Value(op.Pages)))
	if op.Cursor == "" {
		cond = cond.And(expression.Or(expression.AttributeNotExists(expression.Name("cursor")), expression.Name("cursor").Equal(expression.Value(""))))
	} else {
		cond = cond.And(expression.Name("cursor").Equal(expression.Value(op.Cursor)))
	}
	item, err := x.t.TxUpdate(k, upd, &cond)
	if err != nil {
		return schema.TriageOpItem{}, err
	}
	items := []types.TransactWriteItem{item}
	if len(ids) > 0 {
		page, err := x.t.TxPut(schema.TriageIDsItem{Key: schema.TriageIDsKey(op.CompanyID, op.ID, op.Pages), IDs: ids, ExpiresAt: op.ExpiresAt}, nil)
		if err != nil {
			return schema.TriageOpItem{}, err
		}
		items = append(items, page)
		op.Pages++
		op.Matched += int64(len(ids))
	}
	if err := x.t.Transact(ctx, items); err != nil {
		return schema.TriageOpItem{}, err
	}
	op.Cursor = next
	if next == "" {
		op.State = OpApplying
	}
	return op, nil
}

// TriageIDs reads the operation's n-th id page.
func (x *Triage) TriageIDs(ctx context.Context, companyID int64, id string, n int) ([]string, error) {
	var p schema.TriageIDsItem
	err := x.t.GetItemConsistent(ctx, schema.TriageIDsKey(companyID, id, n), &p)
	return p.IDs, err
}

// TxAdvance is the checkpoint of one applying step, for the transaction
// that does the step's work: from op's (Page, Pos) and counts to next's.
// It fails the transaction when the checkpoint is no longer op's (another
// delivery took the step, or the operation ended).
//
// The condition names the whole previous checkpoint, counts included, not
// only the position: the position alone already orders the steps (it only
// grows), but a worker holding a checkpoint that was never stored (counts
// it computed itself, a stale copy) must be refused rather than have its
// counts written over the stored ones. So the stored counts move only by
// the delta of work committed in the same transaction, wherever a worker
// dies, and however many workers run the operation.
func (x *Triage) TxAdvance(op, next schema.TriageOpItem) (types.TransactWriteItem, error) {
	upd := expression.Set(expression.Name("page"), expression.Value(next.Page)).
		Set(expression.Name("pos"), expression.Value(next.Pos)).
		Set(expression.Name("processed"), expression.Value(next.Processed)).
		Set(expression.Name("changed"), expression.Value(next.Changed))
	cond := expression.Name("state").Equal(expression.Value(OpApplying)).
		And(expression.Name("page").Equal(expression.Value(op.Page))).
		And(expression.Name("pos").Equal(expression.Value(op.Pos))).
		And(expression.Name("processed").Equal(expression.Value(op.Processed))).
		And(expression.Name("changed").Equal(expression.Value(op.Changed)))
	return x.t.TxUpdate(schema.TriageOpKey(op.CompanyID, op.ID), upd, &cond)
}

// FinishTriageOp ends an operation whose every page is applied: done.
// Another delivery that finished it first is no error.
func (x *Triage) FinishTriageOp(ctx context.Context, op schema.TriageOpItem) error {
	upd := expression.Set(expression.Name("state"), expression.Value(OpDone)).
		Set(expression.Name("finished_at"), expression.Value(x.t.Stamp()))
	cond := expression.Name("state").Equal(expression.Value(OpApplying)).
		And(expression.Name("page").Equal(expression.Value(op.Pages)))
	err := x.t.Update(ctx, schema.TriageOpKey(op.CompanyID, op.ID), upd, &cond, nil)
	if errors.Is(err, ddb.ErrConflict) {
		return nil
	}
	return err
}

// FailTriageOp ends an operation no attempt can complete, with the reason
// shown to its reader; the issues already changed stay changed (and
// counted). An operation already done or failed is left alone.
func (x *Triage) FailTriageOp(ctx context.Context, companyID int64, id, reason string) error {
	upd := expression.Set(expression.Name("state"), expression.Value(OpFailed)).
		Set(expression.Name("error"), expression.Value(reason)).
		Set(expression.Name("finished_at"), expression.Value(x.t.Stamp()))
	cond := opOpen()
	err := x.t.Update(ctx, schema.TriageOpKey(companyID, id), upd, &cond, nil)
	if errors.Is(err, ddb.ErrConflict) {
		return nil
	}
	return err
}

// opOpen holds while the operation is neither done nor failed.
func opOpen() expression.ConditionBuilder {
	return expression.Name("state").In(expression.Value(OpQueued), expression.Value(OpCollecting), expression.Value(OpApplying))
}
