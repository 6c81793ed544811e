// Package exports is the store's area of export jobs: one item per export
// of a company's findings (POST /exports), whose insert the export worker
// consumes from the table's stream, and which it moves through
//
//	queued -> running -> done | failed
//
// recording the rows read as it goes and, at the end, the rows written,
// the object's size and key. Each start of the worker is an attempt;
// progress and the end are written only by the current attempt (a
// condition on its number), so a worker that was given up on and is
// retried never mixes its figures with a stale one's, and a finished
// export is never started again: the worker is idempotent.
package exports

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
)

// The states of an export.
const (
	Queued  = "queued"
	Running = "running"
	Done    = "done"
	Failed  = "failed"
)

// Lifetime is how long an export item lives (its TTL); the bucket's
// lifecycle rule removes the object on the same schedule
// (reportstore.ExportDays).
const Lifetime = 3 * 24 * time.Hour

// Exports reads and writes export items.
type Exports struct {
	t *ddb.Table
	l *ledger.Ledger
}

// New returns the area on a table and its ledger.
func New(t *ddb.Table, l *ledger.Ledger) *Exports { return &Exports{t: t, l: l} }

// CreateExport stores a new export in state queued with its audit entry
// (export.create, when ctx carries an actor), in one transaction. The id
// is a random uuid; CompanyID, UserID, Format, Filters and Query must be
// set by the caller.
func (x *Exports) CreateExport(ctx context.Context, e schema.ExportItem) (schema.ExportItem, error) {
	if e.CompanyID <= 0 || e.Format == "" || e.Query == "" {
		return schema.ExportItem{}, errors.New("export needs a company, a format and a query")
	}
	now := x.t.Clock()
	e.ID = uuid.NewString()
	e.Key = schema.ExportKey(e.CompanyID, e.ID)
	e.Entity, e.Status, e.Attempt = schema.ExportEntity, Queued, 0
	e.CreatedAt = now.UTC().Format(time.RFC3339)
	e.ExpiresAt = now.Add(Lifetime).Unix()
	e.RowsRead, e.RowsExpected, e.Rows, e.Bytes = 0, 0, 0, 0
	e.ObjectKey, e.Error, e.StartedAt, e.FinishedAt = "", "", "", ""
	put, err := x.t.TxPutNew(e)
	if err != nil {
		return schema.ExportItem{}, err
	}
	audit, err := x.l.TxAudit(ctx, e.CompanyID, ledger.AuditEntry{Action: "export.create", TargetType: "export", TargetID: e.ID,
		Changes: map[string]ledger.Change{"format": {After: e.Format}, "filters": {After: e.Filters}}})
	if err != nil {
		return schema.ExportItem{}, err
	}
	return e, x.t.Transact(ctx, append(audit, put))
}

// GetExport reads an export of the company; ErrNotFound for an unknown id,
// one that is not a uuid, or another company's.
func (x *Exports) GetExport(ctx context.Context, companyID int64, id string) (schema.ExportItem, error) {
	u, err := uuid.Parse(id)
	if err != nil || len(id) != 36 {
		return schema.ExportItem{}, ddb.ErrNotFound
	}
	var e schema.ExportItem
	err = x.t.GetItemConsistent(ctx, schema.ExportKey(companyID, u.String()), &e)
	return e, err
}

// StartExport begins an attempt at the export: queued or running (a
// previous attempt that ended without a word) becomes running, with the
// attempt counted and the progress back at zero. It answers false, and
// changes nothing, when the export is done or failed; an export already
// tried maxAttempts times is failed instead.
func (x *Exports) StartExport(ctx context.Context, companyID int64, id string, maxAttempts int) (schema.ExportItem, bool, error) {
	k := schema.ExportKey(companyID, id)
	upd := expression.Set(expression.Name("status"), expression.Value(Running)).
		Set(expression.Name("attempt"), expression.Name("attempt").Plus(expression.Value(1))).
		Set(expression.Name("started_at"), expression.Value(x.t.Stamp())).
		Set(expression.Name("rows_read"), expression.Value(0))
	cond := open().And(expression.Name("attempt").LessThan(expression.Value(maxAttempts)))
	var e schema.ExportItem
	err := x.t.Update(ctx, k, upd, &cond, &e)
	if !errors.Is(err, ddb.ErrConflict) {
		return e, err == nil, err
	}
	if err := x.t.GetItemConsistent(ctx, k, &e); err != nil {
		return schema.ExportItem{}, false, err
	}
	if e.Status == Done || e.Status == Failed {
		return e, false, nil
	}
	return e, false, x.FailExport(ctx, companyID, id, fmt.Sprintf("gave up after %d attempts", maxAttempts))
}

// ExportProgress records the rows an attempt has read so far and how many
// the list holds; ErrConflict when the attempt is no longer the current one.
func (x *Exports) ExportProgress(ctx context.Context, companyID int64, id string, attempt int, read, expected int64) error {
	upd := expression.Set(expression.Name("rows_read"), expression.Value(read)).
		Set(expression.Name("rows_expected"), expression.Value(expected))
	cond := current(attempt)
	return x.t.Update(ctx, schema.ExportKey(companyID, id), upd, &cond, nil)
}

// Result is what an attempt that wrote the export's object ends with.
type Result struct {
	Read, Rows, Bytes int64 // issues read, findings written, object size
	ObjectKey         string
}

// FinishExport ends an attempt that wrote the export's object: done, with
// its figures and key. ErrConflict when the attempt is no longer the
// current one.
func (x *Exports) FinishExport(ctx context.Context, companyID int64, id string, attempt int, r Result) error {
	upd := expression.Set(expression.Name("status"), expression.Value(Done)).
		Set(expression.Name("rows_read"), expression.Value(r.Read)).
		Set(expression.Name("rows"), expression.Value(r.Rows)).
		Set(expression.Name("bytes"), expression.Value(r.Bytes)).
		Set(expression.Name("object_key"), expression.Value(r.ObjectKey)).
		Set(expression.Name("finished_at"), expression.Value(x.t.Stamp()))
	cond := current(attempt)
	return x.t.Update(ctx, schema.ExportKey(companyID, id), upd, &cond, nil)
}

// FailExport ends an export that no attempt can complete, with the reason
// shown to its reader; an export already done or failed is left alone.
func (x *Exports) FailExport(ctx context.Context, companyID int64, id, reason string) error {
	upd := expression.Set(expression.Name("status"), expression.Value(Failed)).
		Set(expression.Name("error"), expression.Value(reason)).
		Set(expression.Name("finished_at"), expression.Value(x.t.Stamp()))
	cond := open()
	err := x.t.Update(ctx, schema.ExportKey(companyID, id), upd, &cond, nil)
	if errors.Is(err, ddb.ErrConflict) {
		return nil
	}
	return err
}

// open holds while the export is queued or running.
func open() expression.ConditionBuilder {
	return expression.Name("status").In(expression.Value(Queued), expression.Value(Running))
}

// current holds while attempt is the export's running attempt.
func current(attempt int) expression.ConditionBuilder {
	return expression.Name("status").Equal(expression.Value(Running)).
		And(expression.Name("attempt").Equal(expression.Value(attempt)))
}
