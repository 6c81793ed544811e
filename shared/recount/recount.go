// Package recount recomputes a company's group counters from its issues,
// and its list totals from its quality and SCA findings, and compares them
// with the stored ones: the counters must always equal a recount. Tests
// (through testenv.Recount) and the load run use it.
package recount

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/acme/codescan-api/shared/store"
)

// Check checks every issue's due index keys (Issue.CheckDueKeys), computes
// every group counter of a company from its issues and checks the stored
// counters, the per-scope group totals, the count-ordered
// index and the branch index against it, then the trend records (see
// checkTrends) and the list totals (see checkLists); the error names the
// first difference.
func Check(ctx context.Context, st Store, companyID int64) error {
	var issues []store.Issue
	if err := st.EachIssue(ctx, companyID, func(i store.Issue) error { issues = append(issues, i); return nil }); err != nil {
		return err
	}
	want := map[store.Scope]map[store.Dimension]map[string]store.Cells{}
	branches := map[string][]int64{}
	for _, i := range issues {
		if err := i.CheckDueKeys(); err != nil {
			return err
		}
		for _, sc := range []store.Scope{{}, {ProjectID: i.ProjectID}, {ProjectID: i.ProjectID, Branch: i.Branch}} {
			if want[sc] == nil {
				want[sc] = map[store.Dimension]map[string]store.Cells{store.ByCWE: {}, store.ByFile: {}}
			}
			for dim, g := range map[store.Dimension]string{store.ByCWE: strconv.Itoa(i.CWE), store.ByFile: i.FilePath} {
				if want[sc][dim][g] == nil {
					want[sc][dim][g] = store.Cells{}
				}
				want[sc][dim][g][i.Urgency+"/"+i.Status]++
			}
		}
		if ids := branches[i.Branch]; !slices.Contains(ids, i.ProjectID) {
			branches[i.Branch] = append(ids, i.ProjectID)
		}
	}
	want[store.Scope{}] = orEmpty(want[store.Scope{}])
	for sc, dims := range want {
		for _, dim := range []store.Dimension{store.ByCWE, store.ByFile} {
			got, err := st.ScopeGroups(ctx, companyID, sc, dim)
			if err != nil {
				return err
			}
			gotMap := map[string]store.Cells{}
			for _, g := range got {
				if g.Count != g.Cells.Total("", "") {
					return fmt.Errorf("scope %+v %s group %s: count %d != cells %v", sc, dim, g.Group, g.Count, g.Cells)
				}
				gotMap[g.Group] = g.Cells
			}
			if !reflect.DeepEqual(gotMap, dims[dim]) {
				return fmt.Errorf("scope %+v %s counters:\n got %v\nwant %v", sc, dim, gotMap, dims[dim])
			}
			page, total, err := st.GroupsPage(ctx, companyID, sc, dim, 0, 100)
			if err != nil {
				return err
			}
			if total != int64(len(dims[dim])) || len(page) != min(100, len(dims[dim])) {
				return fmt.Errorf("scope %+v %s: total_groups %d, page %d, want %d", sc, dim, total, len(page), len(dims[dim]))
			}
			for n, g := range page {
				if g.Count != dims[dim][g.Group].Total("", "") || (n > 0 && g.Count > page[n-1].Count) {
					return fmt.Errorf("scope %+v %s: index page out of order or stale at %d: %+v", sc, dim, n, page)
				}
			}
		}
	}
	for b, ids := range branches {
		slices.Sort(ids)
		got, err := st.BranchProjects(ctx, companyID, b)
		if err != nil || !reflect.DeepEqual(got, ids) {
			return fmt.Errorf("BranchProjects(%q) = %v, %v; want %v", b, got, err, ids)
		}
	}
	if err := checkTrends(ctx, st, companyID, issues); err != nil {
		return err
	}
	return checkLists(ctx, st, companyID)
}

func orEmpty(m map[store.Dimension]map[string]store.Cells) map[store.Dimension]map[string]store.Cells {
	if m == nil {
		return map[store.Dimension]map[string]store.Cells{store.ByCWE: {}, store.ByFile: {}}
	}
	return m
}
