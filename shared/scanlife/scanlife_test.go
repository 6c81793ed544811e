package scanlife_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/scanlife"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func sarif(results int) []byte {
	rs := make([]string, results)
	for n := range rs {
		rs[n] = fmt.Sprintf(`{"ruleId":"r","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"f%d.go"},"region":{"startLine":1}}}]}`, n)
	}
	return []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":[` + strings.Join(rs, ",") + `]}]}`)
}

// One check refuses a report, whoever asks (the upload or the ingester),
// with one kind, one reason and one message.
func TestCheckRefusesWithOneMessage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		sent   []byte
		kind   scanlife.Kind
		reason string
		msg    string
	}{
		{"not gzip after all", []byte{0x1f, 0x8b, 1, 2}, scanlife.Invalid, scanlife.ReasonUnreadable, "The report is not valid gzip"},
		{"not JSON", []byte("<html>"), scanlife.Invalid, scanlife.ReasonInvalid, "Invalid SARIF report: not valid JSON"},
		{"no runs", []byte(`{"version":"2.1.0"}`), scanlife.Invalid, scanlife.ReasonInvalid, `Invalid SARIF report: missing "runs"`},
		{"too many results", sarif(ingest.MaxFindings + 1), scanlife.TooLarge, scanlife.ReasonTooLarge, "The report has more than 25000 results in a run"},
		{"too large decompressed", testenv.Gzip(t, bytes.Repeat([]byte(" "), ingest.MaxReportBytes+1)), scanlife.TooLarge, scanlife.ReasonTooLarge,
			"The decompressed report exceeds the upload limit of 64 MiB"},
	} {
		_, err := scanlife.Check("sarif", c.sent)
		var ref *scanlife.Refused
		if !errors.As(err, &ref) || ref.Kind != c.kind || ref.Reason != c.reason || !strings.HasPrefix(ref.Message, c.msg) {
			t.Errorf("%s: %#v (%v)", c.name, ref, err)
		}
	}
	rep, err := scanlife.Check("sarif", testenv.Gzip(t, sarif(3)))
	if err != nil || len(rep.Parsed.Findings) != 3 || !bytes.Equal(rep.Body, sarif(3)) {
		t.Fatalf("a good report, compressed: %d findings, %v", len(rep.Parsed.Findings), err)
	}
}

type bucket struct {
	mu   sync.Mutex
	puts map[string][]byte
}

func (b *bucket) Put(_ context.Context, key string, data []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.puts[key] = data
	return nil
}

// Accepting an upload: its scan's id derives from the company and run, the
// project is created on first use (once, however many uploads race), a
// repeat of the run answers the same scan, another report or project for
// the run is refused as a conflict.
func TestAcceptOwnsTheRun(t *testing.T) {
	t.Parallel()
	st := scanlife.StoreOf(testenv.NewStore(t))
	b := &bucket{puts: map[string][]byte{}}
	ctx := context.Background()
	run := uuid.NewString()
	up := func(run, project, digest string) scanlife.Upload {
		return scanlife.Upload{CompanyID: 9, RunID: run, Project: project, Branch: "main", Engine: "sarif", Tool: "t",
			Digest: digest, Sent: []byte(digest)}
	}
	var wg sync.WaitGroup
	ids := make([]string, 4)
	projects := make([]int64, 4)
	for n := range ids {
		wg.Go(func() {
			r := run
			if n > 0 {
				r = uuid.NewString()
			}
			sc, p, err := scanlife.Accept(ctx, st, b, up(r, "svc", "d1"))
			if err != nil {
				t.Error(err)
			}
			ids[n], projects[n] = sc.ID, p.ID
		})
	}
	wg.Wait()
	if ids[0] != scanlife.ScanID(9, run) || projects[0] == 0 || projects[1] != projects[0] || projects[3] != projects[0] {
		t.Fatalf("scans %v of projects %v", ids, projects)
	}
	again, p, err := scanlife.Accept(ctx, st, b, up(run, "SVC", "d1"))
	if err != nil || again.ID != ids[0] || p.ID != projects[0] {
		t.Fatalf("the run again: %v %v %v", again.ID, p.ID, err)
	}
	for _, c := range []struct{ project, digest, msg string }{
		{"svc", "d2", "run_id " + run + " was already uploaded with a different report; a new report needs a new run_id"},
		{"other", "d1", "run_id " + run + " was already uploaded for another project"},
	} {
		_, _, err := scanlife.Accept(ctx, st, b, up(run, c.project, c.digest))
		var ref *scanlife.Refused
		if !errors.As(err, &ref) || ref.Kind != scanlife.Conflict || ref.Message != c.msg {
			t.Errorf("%s/%s: %v", c.project, c.digest, err)
		}
	}
}

// Failing a scan ends it incomplete with its reason, problems and
// scan_failed event, once: a scan no longer processing stays as it is.
func TestFailEndsAScanOnce(t *testing.T) {
	t.Parallel()
	full := testenv.NewStore(t)
	ctx := context.Background()
	p, err := full.Catalog.CreateProject(ctx, schema.Project{CompanyID: 9, Name: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := full.Scans.CreateScan(ctx, scans.Scan{CompanyID: 9, ProjectID: p.ID, Branch: "main", Engine: "sarif", Tool: "t",
		RunID: uuid.NewString(), Status: scans.ScanProcessing})
	if err != nil {
		t.Fatal(err)
	}
	problems := []scans.ScanError{{ScanType: "sarif", Level: "error", Location: "report", Message: "The report is not valid gzip"}}
	at := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	if changed, err := scanlife.Fail(ctx, scanlife.FailingOf(full), sc, scanlife.ReasonUnreadable, problems, at); err != nil || !changed {
		t.Fatalf("fail: %v %v", changed, err)
	}
	got, err := full.Scans.GetScan(ctx, 9, sc.ID)
	if err != nil || got.Status != scans.ScanIncomplete || got.FailedReason != scanlife.ReasonUnreadable || len(got.ScanErrors) != 1 {
		t.Fatalf("the failed scan: %+v %v", got, err)
	}
	tb := ddb.New(full.Client(), full.TableName())
	var ev struct {
		Type string `dynamodbav:"type"`
	}
	if err := tb.GetItemConsistent(ctx, schema.EventKey(9, "scan_failed-"+sc.ID), &ev); err != nil {
		t.Fatalf("the scan_failed event: %+v %v", ev, err)
	}
	if changed, err := scanlife.Fail(ctx, scanlife.FailingOf(full), got, "again", nil, at); err != nil || changed {
		t.Fatalf("failing a failed scan: %v %v", changed, err)
	}
}

// Ingesting a scan writes its report's findings and completes it (the
// apply's last transaction: status, completed_at, scan_completed event); a scan whose report is gone from the bucket ends incomplete,
// done (ErrIncomplete), with the reason of an unreadable report.
func TestIngestCompletesOrFails(t *testing.T) {
	t.Parallel()
	full := testenv.NewStore(t)
	ctx := context.Background()
	p, err := full.Catalog.CreateProject(ctx, schema.Project{CompanyID: 9, Name: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	in := scanlife.Ingestion{Store: scanlife.IngestingOf(full), Reports: testenv.Reports(t), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	report := sarif(3)
	scan := func(digest string) scans.Scan {
		sc, err := full.Scans.CreateScan(ctx, scans.Scan{CompanyID: 9, ProjectID: p.ID, Branch: "main", Engine: "sarif", Tool: "t",
			RunID: uuid.NewString(), ReportSHA256: digest, Status: scans.ScanProcessing})
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	stored := scan("d1")
	if err := in.Reports.Put(ctx, reportstore.ReportKey(9, stored.ID, "d1"), report); err != nil {
		t.Fatal(err)
	}
	if n, err := scanlife.Ingest(ctx, in, stored); err != nil || n != 3 {
		t.Fatalf("ingest: %d %v", n, err)
	}
	got, err := full.Scans.GetScan(ctx, 9, stored.ID)
	if err != nil || got.Status != scans.ScanComplete || got.CompletedAt == "" {
		t.Fatalf("the ingested scan: %+v %v", got, err)
	}
	tb := ddb.New(full.Client(), full.TableName())
	var ev struct {
		Type string `dynamodbav:"type"`
	}
	if err := tb.GetItemConsistent(ctx, schema.EventKey(9, "scan_completed-"+stored.ID), &ev); err != nil || ev.Type != "scan_completed" {
		t.Fatalf("the scan_completed event: %+v %v", ev, err)
	}
	gone := scan("d2")
	if _, err := scanlife.Ingest(ctx, in, gone); !errors.Is(err, scanlife.ErrIncomplete) {
		t.Fatalf("a report gone: %v", err)
	}
	if got, err := full.Scans.GetScan(ctx, 9, gone.ID); err != nil || got.Status != scans.ScanIncomplete || got.FailedReason != scanlife.ReasonUnreadable {
		t.Fatalf("the scan whose report is gone: %+v %v", got, err)
	}
}
