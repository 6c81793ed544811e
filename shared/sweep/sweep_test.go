package sweep_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/scanlife"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/sweep"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// A scan the ingester never completed is ended incomplete once it has
// waited StalledAfter, with the scan_failed event; a younger one, a
// completed one and one that failed on its own are left alone, and a run
// again changes nothing.
func TestSweepEndsStalledScans(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	proj, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: 7, Name: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	scan := func(run string, age time.Duration) scans.Scan {
		t.Helper()
		sc, err := st.Scans.CreateScan(ctx, scans.Scan{CompanyID: 7, ProjectID: proj.ID, Branch: "main", Engine: "sarif", Tool: "gosec",
			RunID: run, Status: scans.ScanProcessing, CreatedAt: now.Add(-age).Format(time.RFC3339)})
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	stalled := scan("11111111-1111-4111-8111-111111111111", 3*time.Hour)
	young := scan("22222222-2222-4222-8222-222222222222", time.Hour)
	done := scan("33333333-3333-4333-8333-333333333333", 4*time.Hour)
	if _, err := st.Findings.ApplyScan(ctx, 7, done, nil); err != nil {
		t.Fatal(err)
	}
	failed := scan("44444444-4444-4444-8444-444444444444", 5*time.Hour)
	if changed, err := scanlife.Fail(ctx, scanlife.FailingOf(st), failed, "The uploaded report is invalid", nil, now); err != nil || !changed {
		t.Fatalf("fail: %v %v", changed, err)
	}
	// Only the stalled scan and the young one still wait.
	if waiting, err := st.Scans.StalledScans(ctx, now, 10); err != nil || len(waiting) != 2 || waiting[0].ScanID != stalled.ID || waiting[1].ScanID != young.ID {
		t.Fatalf("waiting: %+v %v", waiting, err)
	}

	if n, err := sweep.Run(ctx, sweep.StoreOf(st), now); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	got, err := st.Scans.GetScan(ctx, 7, stalled.ID)
	if err != nil || got.Status != scans.ScanIncomplete || got.FailedReason != sweep.Reason || len(got.ScanErrors) != 1 ||
		!strings.Contains(got.ScanErrors[0].Message, "upload the report again with a new run_id") {
		t.Fatalf("stalled scan after the sweep: %+v %v", got, err)
	}
	for _, sc := range []scans.Scan{young, done, failed} {
		before := sc.Status
		if sc.ID == done.ID {
			before = scans.ScanComplete
		}
		if sc.ID == failed.ID {
			before = scans.ScanIncomplete
		}
		if got, err := st.Scans.GetScan(ctx, 7, sc.ID); err != nil || got.Status != before {
			t.Fatalf("scan %s: %s %v, want %s", sc.RunID, got.Status, err, before)
		}
	}
	item, err := st.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.TableName()), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK(7)}, "SK": &types.AttributeValueMemberS{Value: "EVENT#scan_failed-" + stalled.ID},
	}})
	if err != nil || item.Item == nil {
		t.Fatalf("scan_failed event: %v %v", item, err)
	}
	if ev, ok, err := schema.DecodeEventImage(item.Item); err != nil || !ok || !strings.Contains(string(ev.Data), `"failed_reason":"`+sweep.Reason+`"`) {
		t.Fatalf("scan_failed event: %+v %v", ev, err)
	}
	if n, err := sweep.Run(ctx, sweep.StoreOf(st), now); err != nil || n != 0 {
		t.Fatalf("second sweep: %d %v", n, err)
	}
	// Three hours later the young one has stalled too.
	if n, err := sweep.Run(ctx, sweep.StoreOf(st), now.Add(3*time.Hour)); err != nil || n != 1 {
		t.Fatalf("later sweep: %d %v", n, err)
	}
	if waiting, err := st.Scans.StalledScans(ctx, now.Add(24*time.Hour), 10); err != nil || len(waiting) != 0 {
		t.Fatalf("still waiting: %+v %v", waiting, err)
	}
}

// failing is the store, with the failure of some scans refused: their
// branch busy with another upload for longer than a lease wait
// (ErrUnavailable), or another error.
type failing struct {
	*findings.Findings
	refuse map[string]error
}

func (f *failing) SettleScanJournal(ctx context.Context, companyID int64, sc scans.Scan) error {
	if err := f.refuse[sc.ID]; err != nil {
		return err
	}
	return f.Findings.SettleScanJournal(ctx, companyID, sc)
}

// A stalled scan that cannot be ended now is left for the next run and
// holds up none of the others: a busy branch passes quietly, another
// failure is reported after the run.
func TestSweepPassesOverScansItCannotEnd(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var ids []string
	for n, branch := range []string{"main", "dev", "qa"} {
		sc, err := st.Scans.CreateScan(ctx, scans.Scan{CompanyID: 7, ProjectID: 1, Branch: branch, Engine: "sarif", Tool: "gosec",
			RunID: uuid.NewString(), Status: scans.ScanProcessing, CreatedAt: now.Add(-time.Duration(5-n) * time.Hour).Format(time.RFC3339)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sc.ID)
	}
	broken := errors.New("injected")
	fail := &failing{Findings: st.Findings, refuse: map[string]error{ids[0]: ddb.ErrUnavailable, ids[1]: broken}}
	st2 := sweep.StoreOf(st)
	st2.Failing.Findings = fail
	if n, err := sweep.Run(ctx, st2, now); !errors.Is(err, broken) || n != 1 {
		t.Fatalf("sweep with scans it cannot end: %d %v", n, err)
	}
	for n, want := range []string{scans.ScanProcessing, scans.ScanProcessing, scans.ScanIncomplete} {
		if got, err := st.Scans.GetScan(ctx, 7, ids[n]); err != nil || got.Status != want {
			t.Fatalf("scan %d: %s %v, want %s", n, got.Status, err, want)
		}
	}
	fail.refuse = nil
	if n, err := sweep.Run(ctx, st2, now); err != nil || n != 2 {
		t.Fatalf("the next run: %d %v", n, err)
	}
}
