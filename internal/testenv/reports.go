package testenv

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/ingester"
	"github.com/acme/codescan-api/internal/localstream"
	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/exportjob"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
	"github.com/acme/codescan-api/shared/s3local"
	"github.com/acme/codescan-api/shared/store/scans"
)

var (
	s3Once    sync.Once
	s3Proc    *s3local.Process
	s3Reports *s3reports.Store
	s3Err     error
)

// Reports returns the report bucket on the local S3-compatible server: the
// one named by S3_ENDPOINT and REPORTS_BUCKET (make test starts one for
// all packages), or one started for this test binary on first use.
func Reports(t testing.TB) *s3reports.Store {
	t.Helper()
	s3Once.Do(func() {
		endpoint, bucket := os.Getenv(reportstore.EnvEndpoint), os.Getenv(reportstore.EnvBucket)
		if endpoint == "" {
			root, err := dynamolocal.Root()
			if err != nil {
				s3Err = err
				return
			}
			if s3Proc, s3Err = s3local.Start(context.Background(), root, s3local.Options{}); s3Err != nil {
				return
			}
			endpoint, bucket = s3Proc.Endpoint, s3local.Bucket
		}
		if bucket == "" {
			bucket = s3local.Bucket
		}
		s3Reports, s3Err = s3reports.New(context.Background(), bucket, endpoint)
	})
	if s3Err != nil {
		t.Fatalf("testenv: local S3: %v", s3Err)
	}
	return s3Reports
}

// lazyReports is the report bucket of an Env: the local server is reached
// (and, outside make test, started) on first use only, so tests that never
// upload a report never start it.
type lazyReports struct{ t testing.TB }

func (l lazyReports) Put(ctx context.Context, key string, body []byte) error {
	return Reports(l.t).Put(ctx, key, body)
}

func (l lazyReports) Get(ctx context.Context, key string, limit int64) ([]byte, error) {
	return Reports(l.t).Get(ctx, key, limit)
}

func (l lazyReports) List(ctx context.Context, prefix string) ([]reportstore.Object, error) {
	return Reports(l.t).List(ctx, prefix)
}

func (l lazyReports) Create(ctx context.Context, key, contentType string) (reportstore.ObjectWriter, error) {
	return Reports(l.t).Create(ctx, key, contentType)
}

func (l lazyReports) Link(ctx context.Context, key, filename string, expiry time.Duration) (string, error) {
	return Reports(l.t).Link(ctx, key, filename, expiry)
}

// Ingester returns the ingestion worker on the Env's table and bucket,
// with its export worker, as the Lambda main builds it.
func (e *Env) Ingester(t testing.TB) *ingester.Ingester {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &ingester.Ingester{Store: ingester.StoreOf(e.Store), Reports: Reports(t), Log: log,
		Exporter: &exportjob.Worker{Store: exportjob.StoreOf(e.Store), Bucket: Reports(t), Log: log}}
}

// StartIngester runs the ingester on the table's stream (the Env must come
// from NewStreaming) through the local stream poller, as the dev server
// does, until the test ends. The store's writes are watched
// (WatchWrites), for waits on the ingester's progress.
func (e *Env) StartIngester(t testing.TB) {
	t.Helper()
	e.WatchWrites(t)
	streams, err := localstream.NewClient(context.Background(), Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	in := e.Ingester(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p := &localstream.Poller{DB: e.Store.Client(), Table: e.Store.TableName(), Log: in.Log, Streams: streams, Idle: 20 * time.Millisecond,
		Consumers: []localstream.Consumer{in.HandleImage}}
	go func() { defer close(done); _ = p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// Ingest runs the ingester on one uploaded scan at once, for tests whose
// table has no stream (the worker's own path is tested with StartIngester).
func (e *Env) Ingest(t testing.TB, companyID int64, scanID string) {
	t.Helper()
	if err := e.Ingester(t).Ingest(context.Background(), ingester.Job{CompanyID: companyID, ScanID: scanID}); err != nil {
		t.Fatalf("ingest scan %s: %v", scanID, err)
	}
}

// WaitScan polls the scan until it is no longer processing (at most
// limit) and returns it.
func (e *Env) WaitScan(t testing.TB, companyID int64, scanID string, limit time.Duration) scans.Scan {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		sc, err := e.Store.Scans.GetScan(context.Background(), companyID, scanID)
		if err != nil {
			t.Fatalf("scan %s: %v", scanID, err)
		}
		if sc.Status != scans.ScanProcessing {
			return sc
		}
		if time.Now().After(deadline) {
			t.Fatalf("scan %s still processing after %s", scanID, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
