package issuelists

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// ListGroups returns one page of the groups of one scope, in the total
// order of GET /issues/groups: issue count descending, then group key
// ascending (see GroupSortKey); with the scope's number of non-empty
// groups. It reads one summary item and the counters of the page and of
// what it skips, however many issues the scope holds.
func (x *Lists) ListGroups(ctx context.Context, companyID int64, sc schema.Scope, dim schema.Dimension, q page.Request) (page.Page[findings.GroupCount], error) {
	var sum schema.ScopeSummary
	err := x.t.GetItem(ctx, schema.SummaryKey(companyID, sc), &sum)
	if err != nil && !errors.Is(err, ddb.ErrNotFound) {
		return page.Page[findings.GroupCount]{}, err
	}
	total := sum.GroupsCWE
	if dim == schema.ByFile {
		total = sum.GroupsFile
	}
	if q.Token == "" && int64(q.Offset) >= total {
		return page.Of([]findings.GroupCount{}, page.Result{Offset: q.Offset}).Counted(total), nil
	}
	l := page.List{Index: tabledef.GSI1, Partition: schema.CounterIndexPK(companyID, sc, dim), Forward: true}
	got, err := page.ReadPage[findings.GroupCount](ctx, x.t, l, q)
	if err != nil {
		return page.Page[findings.GroupCount]{}, err
	}
	got.Items = nonEmpty(got.Items)
	return got.Counted(total), nil
}

// nonEmpty drops groups whose count fell to zero (a counter leaves the
// index when its writer settles it).
func nonEmpty(groups []findings.GroupCount) []findings.GroupCount {
	return slices.DeleteFunc(groups, func(g findings.GroupCount) bool { return g.Count <= 0 })
}

// ScopeGroups returns every non-empty group of a scope, in group key order.
// Its cost grows with the scope's groups, not its issues.
func (x *Lists) ScopeGroups(ctx context.Context, companyID int64, sc schema.Scope, dim schema.Dimension) ([]findings.GroupCount, error) {
	var out []findings.GroupCount
	if err := x.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), schema.CounterPrefix(sc, dim)), true, &out); err != nil {
		return nil, err
	}
	return append([]findings.GroupCount{}, nonEmpty(out)...), nil
}

// GroupCounts returns one group's counts in each scope (zero counts for a
// scope where the group is empty), in the order of scopes.
func (x *Lists) GroupCounts(ctx context.Context, companyID int64, scopes []schema.Scope, dim schema.Dimension, group string) ([]findings.GroupCount, error) {
	keys := make([]ddb.Key, len(scopes))
	for n, sc := range scopes {
		keys[n] = schema.CounterKey(companyID, sc, dim, group)
	}
	got, err := x.t.BatchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]findings.GroupCount, len(scopes))
	for n, k := range keys {
		out[n] = findings.GroupCount{Dim: dim, Group: group, Cells: findings.Cells{}}
		if av, ok := got[k]; ok {
			if err := attributevalue.UnmarshalMap(av, &out[n]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// MergedGroups adds up the groups of several scopes and sorts them in the
// total order of ListGroups. It reads every group of every scope (a few
// Scopes at a time), so its cost grows with the scopes and their groups,
// never with their issues.
func (x *Lists) MergedGroups(ctx context.Context, companyID int64, scopes []schema.Scope, dim schema.Dimension) ([]findings.GroupCount, error) {
	lists, err := x.scopesGroups(ctx, companyID, scopes, dim)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*findings.GroupCount{}
	for _, l := range lists {
		for _, g := range l {
			m := byKey[g.Group]
			if m == nil {
				m = &findings.GroupCount{Dim: g.Dim, Group: g.Group, Cells: findings.Cells{}}
				byKey[g.Group] = m
			}
			m.Count += g.Count
			for c, n := range g.Cells {
				m.Cells[c] += n
			}
		}
	}
	out := make([]findings.GroupCount, 0, len(byKey))
	for _, g := range byKey {
		out = append(out, *g)
	}
	SortGroups(out)
	return out, nil
}

// SortGroups puts groups in the total order of ListGroups.
func SortGroups(groups []findings.GroupCount) {
	slices.SortFunc(groups, func(a, b findings.GroupCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(schema.GroupSortKey(a.Dim, a.Group), schema.GroupSortKey(b.Dim, b.Group))
	})
}

// scopeReaders bounds the concurrent reads of scopesGroups.
const scopeReaders = 8

// scopesGroups reads ScopeGroups of every scope, in the order of scopes.
func (x *Lists) scopesGroups(ctx context.Context, companyID int64, scopes []schema.Scope, dim schema.Dimension) ([][]findings.GroupCount, error) {
	out := make([][]findings.GroupCount, len(scopes))
	errs := make([]error, len(scopes))
	sem := make(chan struct{}, scopeReaders)
	var wg sync.WaitGroup
	for n, sc := range scopes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[n], errs[n] = x.ScopeGroups(ctx, companyID, sc, dim)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// BranchProjects returns, ascending, the ids of a company's projects that
// have issues on branch. Its cost grows with those projects only.
func (x *Lists) BranchProjects(ctx context.Context, companyID int64, branch string) ([]int64, error) {
	var sums []schema.ScopeSummary
	kc := expression.Key(tabledef.GSI2.PK).Equal(expression.Value(schema.BranchIndexPK(companyID, branch)))
	if err := x.t.QueryAll(ctx, tabledef.GSI2.Name, kc, true, &sums); err != nil {
		return nil, err
	}
	var out []int64
	for _, sum := range sums {
		// A branch whose issues are all deleted keeps its summary at zero;
		// the hash stands in for the name, so the name is checked too.
		if sum.GroupsCWE > 0 && sum.Branch == branch {
			out = append(out, sum.ProjectID)
		}
	}
	return out, nil
}
