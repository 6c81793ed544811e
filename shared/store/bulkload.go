package store

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
)

// EachIssue calls fn with every SAST issue of a company, page by page. It
// reads them all, so it is for exports, checks and benchmarks, never for a
// request path.
func (s *Store) EachIssue(ctx context.Context, companyID int64, fn func(Issue) error) error {
	for shard := range 256 {
		if err := each(ctx, s, ddb.PKBeginsWith(issueShardPK(companyID, fmt.Sprintf("%02x", shard)), ""), fn); err != nil {
			return err
		}
	}
	return nil
}

// EachQualityIssue calls fn with every quality finding of a company (as
// EachIssue, for checks).
func (s *Store) EachQualityIssue(ctx context.Context, companyID int64, fn func(QualityIssue) error) error {
	return each(ctx, s, ddb.PKBeginsWith(schema.CompanyPK(companyID), "QI#"), fn)
}

// EachSCAIssue calls fn with every SCA finding of a company (as EachIssue,
// for checks).
func (s *Store) EachSCAIssue(ctx context.Context, companyID int64, fn func(SCAIssue) error) error {
	return each(ctx, s, ddb.PKBeginsWith(schema.CompanyPK(companyID), "SCA#"), fn)
}

// each calls fn with every item the key condition matches, page by page.
func each[T any](ctx context.Context, s *Store, kc expression.KeyConditionBuilder, fn func(T) error) error {
	var start map[string]types.AttributeValue
	for {
		items, next, err := s.t.QueryRaw(ctx, "", kc, nil, true, 0, start)
		if err != nil {
			return err
		}
		for _, it := range items {
			var v T
			if err := attributevalue.UnmarshalMap(it, &v); err != nil {
				return err
			}
			if err := fn(v); err != nil {
				return err
			}
		}
		if next == nil {
			return nil
		}
		start = next
	}
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
	at := s.t.Stamp()
	// An accepted risk gets the terms the write path gives it.
	issues = slices.Clone(issues)
	changes := make([]issueChange, len(issues))
	for n := range issues {
		changes[n] = issueChange{after: &issues[n]}
	}
	if err := s.settleTerms(ctx, companyID, changes, at); err != nil {
		return err
	}
	items, err := bulkItems(companyID, issues, at)
	if err != nil {
		return err
	}
	trendItems, err := s.bulkTrend(ctx, companyID, issues, at)
	if err != nil {
		return err
	}
	return s.bulkPut(ctx, append(items, trendItems...), workers, progress)
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

// bulkItems are the issue, counter and summary items of issues.
func bulkItems(companyID int64, issues []Issue, at string) ([]any, error) {
	var items []any
	changes := make([]issueChange, len(issues))
	for n := range issues {
		i := issues[n]
		if err := i.prepare(companyID, at); err != nil {
			return nil, err
		}
		if err := i.setDue(nil); err != nil {
			return nil, err
		}
		i.Version = 1 // as commitIssues writes a new issue, so the write path can update it
		items = append(items, i)
		changes[n] = issueChange{after: &i}
	}
	groups := map[Scope]*scopeSummary{}
	for _, d := range counterDeltas(companyID, changes) {
		for c, n := range d.cells {
			if n < 0 {
				return nil, fmt.Errorf("negative count in cell %s", c)
			}
		}
		items = append(items, counterItem(companyID, d.scope, d.dim, d.group, d.cells))
		sum := groups[d.scope]
		if sum == nil {
			sum = newSummary(companyID, d.scope)
			groups[d.scope] = sum
		}
		if d.dim == ByCWE {
			sum.GroupsCWE++
		} else {
			sum.GroupsFile++
		}
	}
	for _, sum := range groups {
		items = append(items, *sum)
	}
	return items, nil
}

// newSummary is an empty scope summary with the attributes txSummary sets.
func newSummary(companyID int64, sc Scope) *scopeSummary {
	sum := &scopeSummary{Key: summaryKey(companyID, sc), ProjectID: sc.ProjectID, Branch: sc.Branch}
	if sc.Branch != "" {
		sum.GSI2PK, sum.GSI2SK = branchIndexPK(companyID, sc.Branch), scopeID(sc)
	}
	return sum
}
