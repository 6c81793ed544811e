package bulkload

import (
	"context"
	"slices"
	"time"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/trends"
)

// issueItems are the items CreateIssues would write for issues in a
// company that has none, computed in memory: the issues, their counters
// (settled) and scope summaries, and their trend records.
func issueItems(ctx context.Context, st *store.Store, companyID int64, issues []findings.Issue) ([]any, error) {
	at := st.Clock().UTC().Format(time.RFC3339)
	issues = slices.Clone(issues)
	changes := make([]findings.IssueChange, len(issues))
	for n := range issues {
		changes[n] = findings.IssueChange{After: &issues[n]}
	}
	// An accepted risk gets the terms the write path gives it.
	if err := findings.SettleTerms(ctx, st.Findings, companyID, changes, at); err != nil {
		return nil, err
	}
	type counter struct {
		sc    schema.Scope
		dim   schema.Dimension
		group string
	}
	cells := map[counter]map[string]int64{}
	var order []counter
	items := make([]any, 0, len(issues))
	for n := range issues {
		i := &issues[n]
		if err := i.Prepare(companyID, at); err != nil {
			return nil, err
		}
		if err := i.SetDue(nil); err != nil {
			return nil, err
		}
		i.Version = 1 // as the write path writes a new issue, so that it can update it
		items = append(items, *i)
		i.EachCounter(func(sc schema.Scope, dim schema.Dimension, group string) {
			c := counter{sc, dim, group}
			if cells[c] == nil {
				cells[c] = map[string]int64{}
				order = append(order, c)
			}
			cells[c][schema.CellKey(i.Urgency, i.Status)]++
		})
	}
	sums := map[schema.Scope]*schema.ScopeSummary{}
	for _, c := range order {
		items = append(items, schema.CounterItem(companyID, c.sc, c.dim, c.group, cells[c]))
		sum := sums[c.sc]
		if sum == nil {
			sum = schema.NewSummary(companyID, c.sc)
			sums[c.sc] = sum
		}
		if c.dim == schema.ByCWE {
			sum.GroupsCWE++
		} else {
			sum.GroupsFile++
		}
	}
	for _, sum := range sums {
		items = append(items, *sum)
	}
	moves, err := findings.TrendMoves(ctx, st.Findings, companyID, changes, at)
	if err != nil {
		return nil, err
	}
	return append(items, trends.Items(companyID, moves)...), nil
}
