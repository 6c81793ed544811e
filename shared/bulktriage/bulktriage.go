// Package bulktriage is the asynchronous half of a bulk triage too large
// to answer at once (POST /issues/triage past store.MaxTriage matches):
// the request stores an operation item (queued) with the filters
// resolved; the new item reaches this worker through the table's stream
// (in AWS the ingester's event source mapping, whose filter also selects
// such items, locally the same stream poller), and the worker collects the
// matched ids page by page, then applies the status to them through the
// issue write path (store.ApplyTriagePage).
//
// A triage rule's application too large to answer at once (POST
// /triage-rules/{id}/apply past store.MaxRuleApply) is the same kind of
// operation, naming the rule: the worker collects the ids the rule
// changes from its narrowest listing, then its SCA findings
// (store.CollectRulePage), and applies the rule's action to them by the
// rule. The rule is read at every step: once deleted or disabled, the
// operation ends failed with that reason.
//
// At-least-once: every step's checkpoint commits with its work (the
// triage room's operations, store/triage), so a delivery killed anywhere
// is resumed by the next one, two deliveries never apply or count a step
// twice, and a done or failed operation is left alone. An error a retry
// may fix fails the stream record, so Lambda delivers it again; the last
// attempt, or an error no retry fixes, ends the operation failed with its
// reason.
package bulktriage

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/acme/codescan-api/shared/attempt"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/streamimage"
)

// MaxAttempts bounds the deliveries of one operation that start it.
const MaxAttempts = 5

// DefaultPageSize is the issues listed per collected page (the list's
// largest), which is also an id page's size.
const DefaultPageSize = 1000

// Store is what the worker reads and writes: the store methods it calls,
// and no others.
type Store struct {
	Lists interface {
		ListIssues(ctx context.Context, companyID int64, f issuelists.IssueFilter, q storepage.Request) (storepage.Page[findings.Issue], error)
	}
	Triage interface {
		ApplyTriagePage(ctx context.Context, op schema.TriageOpItem) (schema.TriageOpItem, error)
		CollectRulePage(ctx context.Context, op schema.TriageOpItem, limit int) (schema.TriageOpItem, error)
		CollectTriageIDs(ctx context.Context, op schema.TriageOpItem, ids []string, next string) (schema.TriageOpItem, error)
		FailTriageOp(ctx context.Context, companyID int64, id string, reason string) error
		FinishTriageOp(ctx context.Context, op schema.TriageOpItem) error
		GetTriageOp(ctx context.Context, companyID int64, id string) (schema.TriageOpItem, error)
		StartTriageOp(ctx context.Context, companyID int64, id string, maxAttempts int) (schema.TriageOpItem, bool, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Lists: st.Lists, Triage: st.Triage}
}

// Worker runs bulk triage operations.
type Worker struct {
	Store Store
	Log   *slog.Logger
	// PageSize is the issues listed per page (DefaultPageSize when 0).
	PageSize int
}

// Job names one operation.
type Job struct {
	CompanyID int64
	ID        string
}

// JobOf reads a new item's image: an operation item is a job, anything
// else is not. It mirrors deployspec.TriageFilter, which selects the same
// items in AWS.
func JobOf(get streamimage.Get) (Job, bool) {
	company, id, ok := streamimage.Entity(get, schema.TriageEntity)
	return Job{CompanyID: company, ID: id}, ok
}

// Run runs one attempt at an operation, from its checkpoint to its end. It
// returns an error only for what a retry may fix, and not on the last
// attempt, which ends the operation failed instead.
func (w *Worker) Run(ctx context.Context, job Job) error {
	op, ok, err := w.Store.Triage.StartTriageOp(ctx, job.CompanyID, job.ID, MaxAttempts)
	if errors.Is(err, ddb.ErrNotFound) {
		w.Log.Warn("bulk triage: operation not found", "company_id", job.CompanyID, "operation_id", job.ID)
		return nil
	}
	if err != nil || !ok {
		return err
	}
	return attempt.End(w.run(ctx, op), attempt.Job{What: "bulk triage", Noun: "the operation", N: op.Attempt, Max: MaxAttempts,
		LogAttr: []any{"company_id", op.CompanyID, "operation_id", op.ID}}, w.Log, func(reason string) error {
		return w.Store.Triage.FailTriageOp(ctx, op.CompanyID, op.ID, reason)
	})
}

// run collects what the operation has not collected yet, applies what it
// has not applied yet, and ends it done.
func (w *Worker) run(ctx context.Context, op schema.TriageOpItem) error {
	collect := w.collectRule
	if op.RuleID == "" {
		f, err := issuelists.DecodeFilter(op.Query)
		if err != nil {
			return &attempt.Permanent{Reason: "the operation's filters are not readable"}
		}
		collect = func(ctx context.Context, op schema.TriageOpItem) (schema.TriageOpItem, error) {
			return w.collectFiltered(ctx, op, f)
		}
	}
	for op.State == triage.OpCollecting {
		next, err := collect(ctx, op)
		if errors.Is(err, ddb.ErrConflict) { // another delivery recorded it
			next, err = w.Store.Triage.GetTriageOp(ctx, op.CompanyID, op.ID)
		}
		if err != nil {
			return stepError(err)
		}
		op = next
	}
	for op.State == triage.OpApplying && op.Page < op.Pages {
		var err error
		if op, err = w.Store.Triage.ApplyTriagePage(ctx, op); err != nil {
			return stepError(err)
		}
	}
	if op.State != triage.OpApplying {
		return nil // ended by another delivery
	}
	if err := w.Store.Triage.FinishTriageOp(ctx, op); err != nil {
		return err
	}
	w.Log.Info("bulk triage: done", "company_id", op.CompanyID, "operation_id", op.ID, "rule_id", op.RuleID, "matched", op.Matched, "changed", op.Changed)
	return nil
}

// collectFiltered collects the next page of a bulk triage's list (f).
func (w *Worker) collectFiltered(ctx context.Context, op schema.TriageOpItem, f issuelists.IssueFilter) (schema.TriageOpItem, error) {
	listed, err := w.Store.Lists.ListIssues(ctx, op.CompanyID, f, storepage.Request{Limit: w.pageSize(), Token: op.Cursor})
	if err != nil {
		return op, err
	}
	return w.Store.Triage.CollectTriageIDs(ctx, op, findings.IDs(listed.Items), listed.Next)
}

// collectRule collects the next page of a rule's application.
func (w *Worker) collectRule(ctx context.Context, op schema.TriageOpItem) (schema.TriageOpItem, error) {
	return w.Store.Triage.CollectRulePage(ctx, op, w.pageSize())
}

// stepError is err of a step, permanent when no retry fixes it.
func stepError(err error) error {
	switch {
	case errors.Is(err, storepage.ErrBadToken):
		return &attempt.Permanent{Reason: "the operation's list position is not readable"}
	case errors.Is(err, triage.ErrRuleGone):
		return &attempt.Permanent{Reason: "the triage rule was deleted"}
	case errors.Is(err, triage.ErrRuleInactive):
		return &attempt.Permanent{Reason: "the triage rule was disabled"}
	case errors.Is(err, triage.ErrRuleEnded):
		return &attempt.Permanent{Reason: "the triage rule's acceptance has ended"}
	case errors.Is(err, ddb.ErrInvalid): // e.g. an acceptance end passed while the operation waited
		return &attempt.Permanent{Reason: "the change is no longer valid: " + strings.TrimSuffix(err.Error(), ": "+ddb.ErrInvalid.Error())}
	}
	return err
}

func (w *Worker) pageSize() int {
	if w.PageSize > 0 {
		return w.PageSize
	}
	return DefaultPageSize
}
