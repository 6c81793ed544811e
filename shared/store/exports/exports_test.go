package exports_test

import (
	"context"
	"errors"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/exports"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// An export's life: created queued with one audit entry; an attempt runs
// it (counted, its progress reset); only the current attempt writes
// progress and the end; a later attempt takes over from one that went
// quiet; done is final; past the attempts allowed it fails with the
// reason; another company's id and a malformed one are not found.
func TestExportLife(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	x := exports.New(tb, &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention})
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{Via: ledger.ViaAPIKey, UserID: 5, KeyID: 1})
	if _, err := x.CreateExport(ctx, schema.ExportItem{CompanyID: 1, Format: "csv"}); err == nil {
		t.Fatal("an export without a query was stored")
	}
	e, err := x.CreateExport(ctx, schema.ExportItem{CompanyID: 1, UserID: 5, Format: "csv", Filters: `{"project":"Web"}`, Query: `{}`})
	if err != nil || e.Status != exports.Queued || e.Entity != schema.ExportEntity {
		t.Fatalf("created %+v %v", e, err)
	}
	var audit []schema.AuditItem
	if err := tb.QueryAllConsistent(ctx, ddb.PKBeginsWith(schema.AuditPK(1), ""), &audit); err != nil || len(audit) != 1 || audit[0].Action != "export.create" || audit[0].TargetID != e.ID {
		t.Fatalf("audit %+v %v", audit, err)
	}
	for _, read := range []func() error{
		func() error { _, err := x.GetExport(ctx, 2, e.ID); return err },
		func() error { _, err := x.GetExport(ctx, 1, "nope"); return err },
	} {
		if err := read(); !errors.Is(err, ddb.ErrNotFound) {
			t.Fatalf("another company's or a malformed id: %v", err)
		}
	}
	first, ok, err := x.StartExport(ctx, 1, e.ID, 3)
	if err != nil || !ok || first.Status != exports.Running || first.Attempt != 1 {
		t.Fatalf("first attempt: %+v %v %v", first, ok, err)
	}
	if err := x.ExportProgress(ctx, 1, e.ID, 1, 40, 100); err != nil {
		t.Fatal(err)
	}
	second, ok, err := x.StartExport(ctx, 1, e.ID, 3)
	if err != nil || !ok || second.Attempt != 2 || second.RowsRead != 0 {
		t.Fatalf("second attempt: %+v %v %v", second, ok, err)
	}
	if err := x.ExportProgress(ctx, 1, e.ID, 1, 50, 100); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("progress of a replaced attempt: %v", err)
	}
	if err := x.FinishExport(ctx, 1, e.ID, 1, exports.Result{Read: 100}); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("the end of a replaced attempt: %v", err)
	}
	if err := x.FinishExport(ctx, 1, e.ID, 2, exports.Result{Read: 100, Rows: 90, Bytes: 4096, ObjectKey: "exports/1/x.csv"}); err != nil {
		t.Fatal(err)
	}
	done, err := x.GetExport(ctx, 1, e.ID)
	if err != nil || done.Status != exports.Done || done.Rows != 90 || done.Bytes != 4096 || done.ObjectKey != "exports/1/x.csv" || done.FinishedAt == "" {
		t.Fatalf("done %+v %v", done, err)
	}
	if _, ok, err := x.StartExport(ctx, 1, e.ID, 3); ok || err != nil {
		t.Fatalf("an attempt at a done export: %v %v", ok, err)
	}
	if err := x.FailExport(ctx, 1, e.ID, "late"); err != nil {
		t.Fatal(err)
	}
	if again, _ := x.GetExport(ctx, 1, e.ID); again.Status != exports.Done || again.Error != "" {
		t.Fatalf("a failure after the end: %+v", again)
	}

	// Out of attempts: failed with the reason.
	f, err := x.CreateExport(ctx, schema.ExportItem{CompanyID: 1, Format: "jsonl", Query: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 2; n++ {
		if _, ok, err := x.StartExport(ctx, 1, f.ID, 2); err != nil || !ok {
			t.Fatalf("attempt %d: %v %v", n, ok, err)
		}
	}
	if _, ok, err := x.StartExport(ctx, 1, f.ID, 2); ok || err != nil {
		t.Fatalf("a third attempt of two: %v %v", ok, err)
	}
	if failed, _ := x.GetExport(ctx, 1, f.ID); failed.Status != exports.Failed || failed.Error != "gave up after 2 attempts" {
		t.Fatalf("out of attempts: %+v", failed)
	}
}
