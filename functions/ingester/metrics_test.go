package ingester_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/ingester"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/metrics"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// emfLine is the part of an embedded-metric line the test reads.
type emfLine struct {
	AWS struct {
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct{ Name, Unit string }
		}
	} `json:"_aws"`
	Service, Engine, Outcome string
	IngestDuration           *float64
	IngestResults            *float64
	Ingestions               *float64
}

// Each scan the ingester handles writes one embedded-metric line: its
// duration, results and outcome by engine; a scan already handled writes
// none.
func TestIngestionMetrics(t *testing.T) {
	env := testenv.New(t)
	ctx := context.Background()
	c := env.Company(t, "Metrics Inc")
	proj, err := env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: c.ID, Name: "metrics", DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile("../uploads/testdata/gosec.sarif")
	if err != nil {
		t.Fatal(err)
	}
	scan := func(id, run string, report []byte) scans.Scan {
		sum := sha256.Sum256(report)
		digest := hex.EncodeToString(sum[:])
		if err := testenv.Reports(t).Put(ctx, reportstore.ReportKey(c.ID, id, digest), report); err != nil {
			t.Fatal(err)
		}
		sc, err := env.Store.Scans.CreateScan(ctx, scans.Scan{ID: id, CompanyID: c.ID, ProjectID: proj.ID, Branch: "main", Engine: "sarif",
			RunID: run, ReportSHA256: digest, Tool: "gosec", Status: scans.ScanProcessing})
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	var out bytes.Buffer
	in := &ingester.Ingester{Store: ingester.StoreOf(env.Store), Reports: testenv.Reports(t), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Metrics: metrics.New(&out, time.Now)}
	for _, sc := range []scans.Scan{
		scan("5f0c2a52-8a57-4d5e-9d3a-6d1f3b9e0a01", "0d7a7b43-1f2e-4c55-9a1b-2c3d4e5f6a01", good),
		scan("5f0c2a52-8a57-4d5e-9d3a-6d1f3b9e0a02", "0d7a7b43-1f2e-4c55-9a1b-2c3d4e5f6a02", []byte(`{"version": "2.1.0", "runs": "not a list"}`)),
	} {
		for range 2 { // the second delivery finds the scan done: no line
			if err := in.Ingest(ctx, ingester.Job{CompanyID: c.ID, ScanID: sc.ID}); err != nil {
				t.Fatal(err)
			}
		}
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one per scan: %s", len(lines), out.String())
	}
	for i, want := range []struct {
		outcome string
		results float64
	}{{"complete", 0}, {"incomplete", 0}} {
		var l emfLine
		if err := json.Unmarshal([]byte(lines[i]), &l); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, lines[i])
		}
		cw := l.AWS.CloudWatchMetrics
		if len(cw) != 1 || cw[0].Namespace != metrics.Namespace || len(cw[0].Metrics) != 3 || strings.Join(cw[0].Dimensions[0], ",") != "Engine,Outcome,Service" {
			t.Errorf("line %d metadata: %+v", i, l.AWS)
		}
		if l.Service != "ingester" || l.Engine != "sarif" || l.Outcome != want.outcome || l.IngestDuration == nil || *l.IngestDuration <= 0 ||
			l.Ingestions == nil || *l.Ingestions != 1 || l.IngestResults == nil {
			t.Errorf("line %d: %+v", i, l)
		}
		if want.outcome == "complete" && *l.IngestResults < 1 {
			t.Errorf("the gosec report's results: %v", *l.IngestResults)
		}
	}
}
