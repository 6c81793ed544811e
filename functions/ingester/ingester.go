// Package ingester is the asynchronous half of POST /scan-upload: the
// upload stores the report in the report bucket and creates its scan in
// status processing; the new scan item reaches this worker through the
// table's stream (in AWS an event source mapping filtered to such items,
// locally the stream poller of the dev server and the tests), and the
// worker reads the report back, parses it, gives its findings the code of
// the source files uploaded with it, and writes them through
// the store's idempotent write paths, which complete the scan. The same
// worker runs the bulk triage operations (shared/bulktriage), the other
// long job of the issue write path, and the exports of findings
// (shared/exportjob), on the same stream: one event source mapping for the
// three, as a DynamoDB stream serves at most two readers at full speed and
// the dispatcher is the other. A report
// that retrying cannot fix (unreadable, invalid, too many results) ends
// the scan incomplete with failed_reason and scan_errors.
package ingester

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/bulktriage"
	"github.com/acme/codescan-api/shared/exportjob"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/metrics"
	"github.com/acme/codescan-api/shared/reports"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/scanlife"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/streamimage"
)

// Ingester stores the findings of uploaded reports.
type Ingester struct {
	Store   Store
	Reports reportstore.Store
	Log     *slog.Logger
	// Metrics receives one line per scan handled (nil: none).
	Metrics *metrics.Emitter
	// Now is the clock of the events it records (time.Now when nil).
	Now func() time.Time
	// Exporter runs the export items.
	Exporter *exportjob.Worker
}

// Job names one scan to ingest.
type Job struct {
	CompanyID int64
	ScanID    string
}

// JobOf reads a new item's image: a scan of an uploaded report (it has a
// run id) created in status processing is a job; anything else is not.
// It mirrors deployspec.IngestFilter, which selects the same items in AWS.
func JobOf(get streamimage.Get) (Job, bool) {
	sk, _ := get("SK")
	status, _ := get("status")
	run, _ := get("run_id")
	id, _ := get("id")
	company, _ := get("company_id")
	if !strings.HasPrefix(sk, schema.ScanSKPrefix) || status != scans.ScanProcessing || run == "" || id == "" {
		return Job{}, false
	}
	n, err := strconv.ParseInt(company, 10, 64)
	if err != nil || n <= 0 {
		return Job{}, false
	}
	return Job{CompanyID: n, ScanID: id}, true
}

// JobOfImage is JobOf for an image in SDK attribute values (the local
// stream poller's).
func JobOfImage(image map[string]ddbtypes.AttributeValue) (Job, bool) {
	return JobOf(streamimage.FromSDK(image))
}

// HandleImage runs the job a new item's image names, if it names one: the
// local stream poller's consumer.
func (in *Ingester) HandleImage(ctx context.Context, image map[string]ddbtypes.AttributeValue) error {
	return in.handle(ctx, streamimage.FromSDK(image))
}

// handle runs the job a new item's image names: a scan to ingest, a bulk
// triage operation (bulktriage), whose writes are the same issue write
// path's, or an export (exportjob); anything else is not a job.
func (in *Ingester) handle(ctx context.Context, get streamimage.Get) error {
	if job, ok := JobOf(get); ok {
		return in.Ingest(ctx, job)
	}
	if job, ok := bulktriage.JobOf(get); ok {
		return (&bulktriage.Worker{Store: bulktriage.Store{Lists: in.Store.Lists, Triage: in.Store.Triage}, Log: in.Log}).Run(ctx, job)
	}
	if job, ok := exportjob.JobOf(get); ok {
		if in.Exporter == nil { // a wiring mistake: fail the record, visibly, rather than panic
			return fmt.Errorf("export %s reached an ingester without an export worker", job.ID)
		}
		return in.Exporter.Run(ctx, job)
	}
	return nil
}

// HandleStream is the Lambda handler of the stream event source mapping:
// each new scan is ingested (each new bulk triage operation or export run)
// in turn; one whose job failed in a way a
// retry may fix (throttling, a busy branch, the bucket unavailable) is
// reported as a batch item failure, so Lambda retries from it (bisecting,
// then sending the batch's description to the failure queue).
func (in *Ingester) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var out events.DynamoDBEventResponse
	for _, r := range ev.Records {
		if r.EventName != string(events.DynamoDBOperationTypeInsert) {
			continue
		}
		err := in.handle(ctx, streamimage.FromLambda(r.Change.NewImage))
		if err != nil {
			out.BatchItemFailures = append(out.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
			// Lambda retries from the first failure on: the rest of the
			// batch comes again with it.
			break
		}
	}
	return out, nil
}

// Problem levels of scan_errors, as the real client reads them.
const levelError = "error"

// Ingest stores the findings of one uploaded report. It is idempotent: a
// scan that is no longer processing (ingested, or failed, by an earlier
// delivery) is left alone, and writing the same findings again changes
// nothing. It returns an error only for what a retry may fix.
func (in *Ingester) Ingest(ctx context.Context, job Job) error {
	sc, err := in.Store.Scans.GetScan(ctx, job.CompanyID, job.ScanID)
	if errors.Is(err, ddb.ErrNotFound) {
		in.Log.Warn("ingest: scan not found", "company_id", job.CompanyID, "scan_id", job.ScanID)
		return nil
	}
	if err != nil {
		return err
	}
	if sc.Status != scans.ScanProcessing {
		return nil
	}
	start := in.Metrics.Now()
	results, err := in.ingest(ctx, job, sc)
	in.emit(sc.Engine, start, results, err)
	if errors.Is(err, errIncomplete) {
		return nil
	}
	return err
}

// errIncomplete is ingest's answer for a scan it ended incomplete: done,
// not to be retried.
var errIncomplete = errors.New("scan ended incomplete")

// Outcomes of an ingestion, the Outcome dimension of its metrics.
const (
	outcomeComplete   = "complete"
	outcomeIncomplete = "incomplete"
	outcomeRetry      = "retry"
)

// emit writes the ingestion's metrics: its duration and results by engine
// and outcome (complete, incomplete: the scan failed for good, retry: an
// error a later delivery may fix).
func (in *Ingester) emit(engine string, start time.Time, results int, err error) {
	outcome := outcomeComplete
	switch {
	case errors.Is(err, errIncomplete):
		outcome = outcomeIncomplete
	case err != nil:
		outcome = outcomeRetry
	}
	in.Metrics.Emit(map[string]string{"Service": "ingester", "Engine": engine, "Outcome": outcome},
		metrics.Value{Name: "IngestDuration", Unit: metrics.Milliseconds, Value: in.Metrics.Since(start)},
		metrics.Value{Name: "IngestResults", Unit: metrics.Count, Value: float64(results)},
		metrics.Value{Name: "Ingestions", Unit: metrics.Count, Value: 1})
}

// ingest parses and writes the report of sc, a processing scan, and returns
// how many results it had; errIncomplete when it ended the scan incomplete.
func (in *Ingester) ingest(ctx context.Context, job Job, sc scans.Scan) (int, error) {
	raw, err := in.Reports.Get(ctx, reportstore.ReportKey(job.CompanyID, sc.ID, sc.ReportSHA256), ingest.MaxReportBytes)
	switch {
	case errors.Is(err, reportstore.ErrNotFound):
		return 0, in.fail(ctx, sc, scanlife.ReasonUnreadable, "the stored report is missing (reports expire after %d days)", reportstore.ReportDays)
	case errors.Is(err, reportstore.ErrTooLarge):
		return 0, in.fail(ctx, sc, scanlife.ReasonTooLarge, "the stored report exceeds %d MiB", ingest.MaxReportBytes>>20)
	case err != nil:
		return 0, err
	}
	checked, err := scanlife.Check(sc.Engine, raw)
	if err != nil {
		return 0, in.refused(ctx, sc, err)
	}
	rep := checked.Parsed
	n := len(rep.Findings)
	if err := ingest.Sources(ctx, in.Reports, job.CompanyID, sc.RunID, rep.Findings); err != nil {
		return n, err
	}
	proj, err := in.Store.Catalog.GetProject(ctx, job.CompanyID, sc.ProjectID)
	if err != nil {
		return n, err
	}
	if err := in.components(ctx, sc, proj, checked); err != nil {
		return n, err
	}
	if err := ingest.Write(ctx, ingest.Store{Findings: in.Store.Findings, Quality: in.Store.Quality, SCA: in.Store.SCA}, job.CompanyID, sc, proj, rep.Findings); err != nil {
		in.Log.Error("ingest: write findings", "company_id", job.CompanyID, "scan_id", sc.ID, "error", err.Error())
		return n, err
	}
	in.Log.Info("ingest: scan complete", "company_id", job.CompanyID, "scan_id", sc.ID, "findings", n)
	return n, nil
}

// refused ends the scan incomplete for a report refused (scanlife.Check:
// its reason, and the message the upload would have answered) or one its
// reader could not read.
func (in *Ingester) refused(ctx context.Context, sc scans.Scan, err error) error {
	var ref *scanlife.Refused
	if errors.As(err, &ref) {
		return in.fail(ctx, sc, ref.Reason, "%s", ref.Message)
	}
	return in.fail(ctx, sc, scanlife.ReasonUnreadable, "%s", err.Error())
}

// components keeps the components a report lists (SBOMs, the SCA
// scanners' package lists) as its engine's set on the scan's branch, and
// announces the blast radius of the advisories it brings (ingest's
// WriteComponents); reports of other engines list none.
func (in *Ingester) components(ctx context.Context, sc scans.Scan, proj schema.Project, rep scanlife.Report) error {
	if !reports.ListsComponents(sc.Engine) {
		return nil
	}
	inv, err := scanlife.Components(sc.Engine, rep)
	if err != nil {
		return in.refused(ctx, sc, err)
	}
	engine, _ := reports.Canonical(sc.Engine)
	if err := ingest.WriteComponents(ctx, ingest.ComponentStore{Components: in.Store.Components, Ledger: in.Store.Ledger}, engine, sc, proj, inv); err != nil {
		in.Log.Error("ingest: write components", "company_id", sc.CompanyID, "scan_id", sc.ID, "error", err.Error())
		return err
	}
	return nil
}

func (in *Ingester) now() time.Time {
	if in.Now == nil {
		return time.Now()
	}
	return in.Now()
}

// fail ends the scan incomplete: reason is its failed_reason, the detail
// its one scan error; the scan_failed notification event (id
// scan_failed-<scan id>) is recorded with it. It returns errIncomplete
// once that is stored.
func (in *Ingester) fail(ctx context.Context, sc scans.Scan, reason, detail string, args ...any) error {
	msg := fmt.Sprintf(detail, args...)
	changed, err := scanlife.Fail(ctx, scanlife.Failing{Catalog: in.Store.Catalog, Findings: in.Store.Findings, Scans: in.Store.Scans},
		sc, reason, []scans.ScanError{{ScanType: sc.Engine, Level: levelError, Location: "report", Message: msg}}, in.now())
	if err != nil {
		return err
	}
	if changed {
		in.Log.Warn("ingest: scan incomplete", "company_id", sc.CompanyID, "scan_id", sc.ID, "reason", reason, "detail", msg)
	}
	return errIncomplete
}
