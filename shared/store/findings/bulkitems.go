package findings

import (
	"context"
	"fmt"
	"slices"

	"github.com/acme/codescan-api/shared/store/internal/schema"
)

// bulkItems are the issue, counter and summary items of issues.
func bulkItems(companyID int64, issues []Issue, at string) ([]any, error) {
	var items []any
	changes := make([]IssueChange, len(issues))
	for n := range issues {
		i := issues[n]
		if err := i.Prepare(companyID, at); err != nil {
			return nil, err
		}
		if err := i.SetDue(nil); err != nil {
			return nil, err
		}
		i.Version = 1 // as commitIssues writes a new issue, so the write path can update it
		items = append(items, i)
		changes[n] = IssueChange{After: &i}
	}
	groups := map[Scope]*ScopeSummary{}
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
func newSummary(companyID int64, sc Scope) *ScopeSummary {
	sum := &ScopeSummary{Key: schema.SummaryKey(companyID, sc), ProjectID: sc.ProjectID, Branch: sc.Branch}
	if sc.Branch != "" {
		sum.GSI2PK, sum.GSI2SK = schema.BranchIndexPK(companyID, sc.Branch), schema.ScopeID(sc)
	}
	return sum
}

// loadItems are the items bulkload.CreateIssues would write for issues in a company
// that has none (every counter settled), computed in memory, with their
// trend items: what the benchmark's loader writes.
func (x *Findings) loadItems(ctx context.Context, companyID int64, issues []Issue) ([]any, error) {
	at := x.t.Stamp()
	// An accepted risk gets the terms the write path gives it.
	issues = slices.Clone(issues)
	changes := make([]IssueChange, len(issues))
	for n := range issues {
		changes[n] = IssueChange{After: &issues[n]}
	}
	if err := x.settleTerms(ctx, companyID, changes, at); err != nil {
		return nil, err
	}
	items, err := bulkItems(companyID, issues, at)
	if err != nil {
		return nil, err
	}
	trendItems, err := x.bulkTrend(ctx, companyID, issues, at)
	if err != nil {
		return nil, err
	}
	return append(items, trendItems...), nil
}
