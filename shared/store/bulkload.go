package store

import (
	"context"
	"sync"

	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
)

// EachQualityIssue calls fn with every quality finding of a company (as
// EachIssue, for checks).
func (s *Store) EachQualityIssue(ctx context.Context, companyID int64, fn func(QualityIssue) error) error {
	return ddb.Each(ctx, s.t, ddb.PKBeginsWith(schema.CompanyPK(companyID), "QI#"), fn)
}

// EachSCAIssue calls fn with every SCA finding of a company (as EachIssue,
// for checks).
func (s *Store) EachSCAIssue(ctx context.Context, companyID int64, fn func(SCAIssue) error) error {
	return ddb.Each(ctx, s.t, ddb.PKBeginsWith(schema.CompanyPK(companyID), "SCA#"), fn)
}

// BulkLoadIssues is the benchmark's loader, not a write path: it writes
// issues into a company that has none, with the counters and scope
// summaries computed in memory, using parallel BatchWriteItem calls. The
// items are the ones CreateIssues would write for the same issues (every
// counter settled; the tests compare both item by item). It is
// neither conditional nor idempotent, and it must never run beside another
// writer of the company. progress, when set, is called after each batch
// with the number of items it wrote and the number of items in all.
func (s *Store) BulkLoadIssues(ctx context.Context, companyID int64, issues []Issue, workers int, progress func(written, total int)) error {
	items, err := findings.BulkItems(ctx, s.Findings, companyID, issues)
	if err != nil {
		return err
	}
	return s.bulkPut(ctx, items, workers, progress)
}

// bulkPut writes items with parallel BatchWriteItem calls (the loaders'
// writer; never a request path).
func (s *Store) bulkPut(ctx context.Context, items []any, workers int, progress func(written, total int)) error {
	const per = 25
	jobs := make(chan []any)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	var progressMu sync.Mutex // progress is called by one worker at a time
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range jobs {
				if err := s.t.BatchPut(ctx, batch); err != nil {
					errs <- err
					return
				}
				if progress != nil {
					progressMu.Lock()
					progress(len(batch), len(items))
					progressMu.Unlock()
				}
			}
		}()
	}
	var sendErr error
send:
	for start := 0; start < len(items); start += per {
		select {
		case jobs <- items[start:min(start+per, len(items))]:
		case sendErr = <-errs:
			break send
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if sendErr != nil {
		return sendErr
	}
	return <-errs // nil when no worker failed
}
