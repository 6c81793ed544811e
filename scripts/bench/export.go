package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/acme/codescan-api/shared/exportjob"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/exports"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/schema"
)

// benchExport exports every issue of t (CSV, then JSON Lines) from
// DynamoDB Local into the local S3 server, as the export worker does,
// and prints the time, the rows against the list's total and the peak heap
// in use (sampled every 20 ms while it runs).
func benchExport(ctx context.Context, st *store.Store, t *tenant) error {
	bucket, err := s3reports.FromEnv(ctx)
	if err != nil {
		return err
	}
	x := &exportjob.Worker{Store: exportjob.StoreOf(st), Bucket: bucket, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	query, err := issuelists.EncodeFilter(issuelists.IssueFilter{})
	if err != nil {
		return err
	}
	fmt.Printf("\nExport of a whole company of %d issues (the export worker: pages of %d, parts of %d MiB, to the local S3 server)\n\n",
		t.size, exportjob.DefaultPageSize, s3reports.PartSize>>20)
	fmt.Printf("| format | rows | list total | object MiB | time s | rows/s | peak heap in use MiB |\n|---|---|---|---|---|---|---|\n")
	for _, format := range []string{"csv", "jsonl"} {
		e, err := st.Exports.CreateExport(ctx, schema.ExportItem{CompanyID: t.company, Format: format, Filters: "{}", Query: query})
		if err != nil {
			return err
		}
		runtime.GC()
		stop := sampleHeap()
		start := time.Now()
		err = x.Run(ctx, exportjob.Job{CompanyID: t.company, ID: e.ID})
		took := time.Since(start)
		top := stop()
		if err != nil {
			return err
		}
		done, err := st.Exports.GetExport(ctx, t.company, e.ID)
		if err != nil {
			return err
		}
		if done.Status != exports.Done || done.Rows != int64(t.size) {
			return fmt.Errorf("export %s: %s, %d rows of %d: %s", format, done.Status, done.Rows, t.size, done.Error)
		}
		fmt.Printf("| %s | %d | %d | %.1f | %.1f | %.0f | %.1f |\n", format, done.Rows, done.RowsExpected,
			float64(done.Bytes)/(1<<20), took.Seconds(), float64(done.Rows)/took.Seconds(), float64(top)/(1<<20))
	}
	return nil
}

// sampleHeap samples the heap in use until stop is called, which returns
// the peak.
func sampleHeap() (stop func() uint64) {
	var top uint64
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			top = max(top, ms.HeapInuse)
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(quit); <-done; return top }
}
