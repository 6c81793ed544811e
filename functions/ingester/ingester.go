// Package ingester is the asynchronous half of POST /scan-upload: the
// upload stores the report in the report bucket and creates its scan in
// status processing; the new scan item reaches this worker through the
// table's stream (in AWS an event source mapping filtered to such items,
// locally the stream poller of the dev server and the tests), and the
// worker hands the scan to its owner, shared/scanlife (Ingest: the report
// read back and checked, its findings given the code of the source files
// uploaded with it and written, the scan completed; or, for a report that
// retrying cannot fix, the scan ended incomplete with failed_reason and
// scan_errors), and emits the ingestion's metrics. The same worker runs
// the bulk triage operations (shared/bulktriage), the other long job of
// the issue write path, and the exports of findings (shared/exportjob), on
// the same stream: one event source mapping for the three, as a DynamoDB
// stream serves at most two readers at full speed and the dispatcher is
// the other.
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
	"github.com/acme/codescan-api/shared/metrics"
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
		return (&bulktriage.Worker{Store: in.Store.Bulk, Log: in.Log}).Run(ctx, job)
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

// Ingest ingests the scan a job names (scanlife.Ingest) and emits its
// metrics. It is idempotent: a scan that is no longer processing (ingested,
// or failed, by an earlier delivery) is left alone, and writing the same
// findings again changes nothing. It returns an error only for what a
// retry may fix.
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
	results, err := scanlife.Ingest(ctx, in.ingestion(), sc)
	in.emit(sc.Engine, start, results, err)
	if errors.Is(err, scanlife.ErrIncomplete) {
		return nil
	}
	return err
}

// ingestion is what scanlife.Ingest works with: the ingester's areas for
// it, bucket, log and clock.
func (in *Ingester) ingestion() scanlife.Ingestion {
	return scanlife.Ingestion{Store: in.Store.Ingesting, Reports: in.Reports, Log: in.Log, Now: in.Now}
}

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
	case errors.Is(err, scanlife.ErrIncomplete):
		outcome = outcomeIncomplete
	case err != nil:
		outcome = outcomeRetry
	}
	in.Metrics.Emit(map[string]string{"Service": "ingester", "Engine": engine, "Outcome": outcome},
		metrics.Value{Name: "IngestDuration", Unit: metrics.Milliseconds, Value: in.Metrics.Since(start)},
		metrics.Value{Name: "IngestResults", Unit: metrics.Count, Value: float64(results)},
		metrics.Value{Name: "Ingestions", Unit: metrics.Count, Value: 1})
}
