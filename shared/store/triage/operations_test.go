package triage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

func newOps(t *testing.T) (*triage.Triage, *ddb.Table) {
	t.Helper()
	tb := ddb.New(testenv.Table(t))
	return triage.New(tb, &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention}), tb
}

// An operation moves queued -> collecting -> applying -> done through
// checkpoints conditional on the one they start from: a page collected or
// a step advanced by another delivery first is ErrConflict and changes
// nothing, so no page or count is recorded twice; a redelivery resumes
// from the checkpoint; a done operation is left alone.
func TestCheckpointsAreConditional(t *testing.T) {
	t.Parallel()
	x, tb := newOps(t)
	ctx := context.Background()
	if _, err := x.CreateTriageOp(ctx, schema.TriageOpItem{CompanyID: 1, Status: "false_positive"}); err == nil {
		t.Fatal("an operation without a query was stored")
	}
	op, err := x.CreateTriageOp(ctx, schema.TriageOpItem{CompanyID: 1, UserID: 5, Status: "false_positive", Query: `{}`, Filters: `{"project":"Web"}`})
	if err != nil || op.State != triage.OpQueued {
		t.Fatalf("created %+v %v", op, err)
	}
	op, ok, err := x.StartTriageOp(ctx, 1, op.ID, 3)
	if err != nil || !ok || op.State != triage.OpCollecting || op.Attempt != 1 {
		t.Fatalf("started %+v %v %v", op, ok, err)
	}
	first, err := x.CollectTriageIDs(ctx, op, []string{"a", "b", "c"}, "token-1")
	if err != nil || first.Pages != 1 || first.Matched != 3 || first.Cursor != "token-1" {
		t.Fatalf("first page %+v %v", first, err)
	}
	if _, err := x.CollectTriageIDs(ctx, op, []string{"a", "b", "c"}, "token-1"); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("the same page collected twice: %v", err)
	}
	op, err = x.CollectTriageIDs(ctx, first, []string{"d"}, "")
	if err != nil || op.State != triage.OpApplying || op.Pages != 2 || op.Matched != 4 {
		t.Fatalf("last page %+v %v", op, err)
	}
	if ids, err := x.TriageIDs(ctx, 1, op.ID, 1); err != nil || len(ids) != 1 || ids[0] != "d" {
		t.Fatalf("page 1: %v %v", ids, err)
	}
	// A redelivery resumes from the checkpoint.
	again, ok, err := x.StartTriageOp(ctx, 1, op.ID, 3)
	if err != nil || !ok || again.State != triage.OpApplying || again.Pages != 2 || again.Attempt != 2 {
		t.Fatalf("redelivered %+v %v %v", again, ok, err)
	}
	// Steps: the first step's checkpoint commits; the same step again fails
	// and counts nothing.
	step := func(from schema.TriageOpItem, consumed, changed int) (schema.TriageOpItem, error) {
		next := from
		next.Pos += consumed
		if next.Pos == 3 {
			next.Page, next.Pos = next.Page+1, 0
		}
		next.Processed += int64(consumed)
		next.Changed += int64(changed)
		adv, err := x.TxAdvance(from, next)
		if err != nil {
			t.Fatal(err)
		}
		return next, tb.Transact(ctx, []types.TransactWriteItem{adv})
	}
	mid, err := step(op, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := step(op, 2, 1); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("a step taken twice: %v", err)
	}
	if _, err := step(mid, 1, 1); err != nil {
		t.Fatal(err)
	}
	stored, err := x.GetTriageOp(ctx, 1, op.ID)
	if err != nil || stored.Page != 1 || stored.Pos != 0 || stored.Processed != 3 || stored.Changed != 2 {
		t.Fatalf("after two steps: %+v %v", stored, err)
	}
	if err := x.FinishTriageOp(ctx, stored); err != nil {
		t.Fatal(err) // page 1 of 2 is not the end: nothing happens, no error
	}
	if s, _ := x.GetTriageOp(ctx, 1, op.ID); s.State != triage.OpApplying {
		t.Fatalf("finished before its last page: %+v", s)
	}
	last := stored
	last.Page = 2
	adv, _ := x.TxAdvance(stored, last)
	if err := tb.Transact(ctx, []types.TransactWriteItem{adv}); err != nil {
		t.Fatal(err)
	}
	if err := x.FinishTriageOp(ctx, last); err != nil {
		t.Fatal(err)
	}
	if err := x.FailTriageOp(ctx, 1, op.ID, "late"); err != nil {
		t.Fatal(err)
	}
	done, _ := x.GetTriageOp(ctx, 1, op.ID)
	if done.State != triage.OpDone || done.Error != "" || done.Changed != 2 || done.FinishedAt == "" {
		t.Fatalf("done %+v", done)
	}
	if _, ok, err := x.StartTriageOp(ctx, 1, op.ID, 3); ok || err != nil {
		t.Fatalf("a delivery after the end: %v %v", ok, err)
	}
	if _, err := x.GetTriageOp(ctx, 2, op.ID); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("another company's operation: %v", err)
	}
}

// Past the attempts allowed, an operation is failed with the reason; a
// rule's operation names its rule and records the rule's audit entry.
func TestAttemptsAndRuleOps(t *testing.T) {
	t.Parallel()
	x, _ := newOps(t)
	ctx := context.Background()
	op, err := x.CreateRuleOp(ctx, schema.TriageOpItem{CompanyID: 1, RuleID: "r1", Status: "false_positive"}, ledger.AuditEntry{Action: "triage_rule.apply", TargetType: "triage_rule", TargetID: "r1"})
	if err != nil || op.RuleID != "r1" || op.State != triage.OpQueued {
		t.Fatalf("rule op %+v %v", op, err)
	}
	if _, err := x.CreateRuleOp(ctx, schema.TriageOpItem{CompanyID: 1}, ledger.AuditEntry{}); err == nil {
		t.Fatal("a rule op without a rule was stored")
	}
	for n := 1; n <= 2; n++ {
		if _, ok, err := x.StartTriageOp(ctx, 1, op.ID, 2); err != nil || !ok {
			t.Fatalf("attempt %d: %v %v", n, ok, err)
		}
	}
	if _, ok, err := x.StartTriageOp(ctx, 1, op.ID, 2); ok || err != nil {
		t.Fatalf("a third attempt of two: %v %v", ok, err)
	}
	if failed, _ := x.GetTriageOp(ctx, 1, op.ID); failed.State != triage.OpFailed || failed.Error != "gave up after 2 attempts" {
		t.Fatalf("out of attempts: %+v", failed)
	}
}
