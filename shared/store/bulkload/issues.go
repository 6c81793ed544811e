package bulkload

import (
	"context"
	"sync"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
)

// The loaders are the benchmark's, not write paths: they write, into a
// company that has none of the items yet, what the create path would
// write for each item (the tests compare both item by item), with
// parallel batch writes and the company's counters written once. They are
// neither conditional nor idempotent, and must never run beside another
// writer of the company. progress, when set, is called after each batch
// with the number of items it wrote and the number of items in all.

// table is st's table as the loaders write it, with st's clock.
func table(st *store.Store) *ddb.Table {
	return &ddb.Table{DB: st.Client(), Name: st.TableName(), Now: st.Clock}
}

// Issues writes issues into a company that has none, with the counters
// and scope summaries computed in memory: the items bulkload.CreateIssues would
// write for the same issues, every counter settled.
func Issues(ctx context.Context, st *store.Store, companyID int64, issues []findings.Issue, workers int, progress func(written, total int)) error {
	items, err := issueItems(ctx, st, companyID, issues)
	if err != nil {
		return err
	}
	return put(ctx, table(st), items, workers, progress)
}

// put writes items with parallel BatchWriteItem calls.
func put(ctx context.Context, t *ddb.Table, items []any, workers int, progress func(written, total int)) error {
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
				if err := t.BatchPut(ctx, batch); err != nil {
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
