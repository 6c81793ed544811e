// Command bench-ingest measures what storing a scan's findings costs on
// DynamoDB Local (the one DYNAMODB_ENDPOINT names; `make bench` starts it,
// with the local S3 server the uploads need): first the upload-to-countable
// rate of the asynchronous upload at 1,000, 5,000 and 25,000 results
// (BENCH_UPLOAD_SIZES) beside the raw BatchWriteItem rate of as many similar
// items and the rate of the same items in fenced transactions (upload.go);
// then
// a first scan of N findings on a branch against a second scan that
// re-detects the same N (identity kept, nothing to change), with the time
// and the write and read capacity of each and their ratio, all in one run.
// It drives the store's lifecycle (ApplyScan) with the issues ingestion
// builds from a parsed report, so parsing is left out of both figures.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

func main() {
	sizes := flag.String("sizes", envOr("BENCH_REDETECT_SIZES", "1000,10000"), "finding counts to measure (env BENCH_REDETECT_SIZES)")
	uploadSizes := flag.String("upload-sizes", envOr("BENCH_UPLOAD_SIZES", "1000,5000,25000"), "report sizes of the upload bench (env BENCH_UPLOAD_SIZES; empty skips it)")
	flag.Parse()
	if *uploadSizes != "" {
		if err := uploadBench(context.Background(), os.Getenv("DYNAMODB_ENDPOINT"), *uploadSizes); err != nil {
			fmt.Fprintln(os.Stderr, "bench-ingest:", err)
			os.Exit(1)
		}
	}
	if err := run(*sizes); err != nil {
		fmt.Fprintln(os.Stderr, "bench-ingest:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// cost is one measured apply.
type cost struct {
	took     time.Duration
	rcu, wcu float64
	requests int
}

func run(sizes string) error {
	ctx := context.Background()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		return fmt.Errorf("DYNAMODB_ENDPOINT is unset (run it with `make bench`)")
	}
	db, err := config.NewDynamoDB(ctx, endpoint)
	if err != nil {
		return err
	}
	st := store.New(db, fmt.Sprintf("bench_ingest_%d", time.Now().UnixNano()))
	if err := bulkload.CreateTable(ctx, st, false); err != nil {
		return err
	}
	fmt.Println("\nRe-detection: a first scan of N findings, then a second scan reporting the same N")
	fmt.Println("| N | first scan s | WCU | RCU | re-detect s | WCU | RCU | time ratio | WCU ratio |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for k, raw := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || n < 1 {
			return fmt.Errorf("size %q", raw)
		}
		company := int64(100 + k)
		proj := schema.Project{ID: 1, CompanyID: company, Name: "bench"}
		rep := report(n)
		first, err := apply(ctx, st, company, proj, rep, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		if err != nil {
			return err
		}
		again, err := apply(ctx, st, company, proj, rep, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
		if err != nil {
			return err
		}
		fmt.Printf("| %d | %.2f | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %.2f |\n", n,
			first.took.Seconds(), first.wcu, first.rcu, again.took.Seconds(), again.wcu, again.rcu,
			again.took.Seconds()/first.took.Seconds(), again.wcu/first.wcu)
	}
	return nil
}

// report is n SAST findings over 40 CWEs and n/10 files (ten findings to
// a file), as a parser would give them.
func report(n int) reportfinding.Report {
	rep := reportfinding.Report{Tools: []string{"bench-sast"}}
	files := max(n/10, 1)
	for k := range n {
		file := k % files
		rep.Findings = append(rep.Findings, reportfinding.Finding{
			Kind: reportfinding.SAST, Tool: "bench-sast", RuleID: fmt.Sprintf("rule-%d", k%40), CWE: 20 + k%40,
			Path: fmt.Sprintf("src/pkg%d/file%d.go", file%17, file), Line: 1 + k%500,
			Urgency: []string{"CR", "HI", "ME", "LO"}[k%4], Message: fmt.Sprintf("finding %d", k),
		})
	}
	return rep
}

func apply(ctx context.Context, st *store.Store, company int64, proj schema.Project, rep reportfinding.Report, at time.Time) (cost, error) {
	sc, err := st.Scans.CreateScan(ctx, scans.Scan{ID: uuid.NewString(), CompanyID: company, ProjectID: proj.ID, Branch: "main",
		Engine: "sarif", Tool: ingest.Tool(rep, "sarif"), Status: scans.ScanProcessing, CreatedAt: at.Format(time.RFC3339)})
	if err != nil {
		return cost{}, err
	}
	m := &ddb.Meter{}
	start := time.Now()
	if _, err := st.Findings.ApplyScan(ddb.WithMeter(ctx, m), company, sc, ingest.Issues(company, sc, proj, rep.Findings)); err != nil {
		return cost{}, err
	}
	took := time.Since(start)
	req, rcu, wcu := m.Snapshot()
	return cost{took: took, rcu: rcu, wcu: wcu, requests: req}, nil
}
