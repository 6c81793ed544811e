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

	"github.com/acme/codescan-api/shared/store/findings"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Check checks every issue's due index keys (Issue.CheckDueKeys), computes
// every group counter of a company from its issues and checks the stored
// counters, the per-scope group totals, the count-ordered
// index and the branch index against it, then the trend records (see
// checkTrends) and the list totals (see checkLists); the error names the
// first difference.
func Check(ctx context.Context, st Store, companyID int64) error {
	var issues []findings.Issue
	if err := st.Lists.EachIssue(ctx, companyID, func(i findings.Issue) error { issues = append(issues, i); return nil }); err != nil {
		return err
	}
	want := map[schema.Scope]map[schema.Dimension]map[string]findings.Cells{}
	branches := map[string][]int64{}
	for _, i := range issues {
		if err := i.CheckDueKeys(); err != nil {
			return err
		}
		for _, sc := range []schema.Scope{{}, {ProjectID: i.ProjectID}, {ProjectID: i.ProjectID, Branch: i.Branch}} {
			if want[sc] == nil {
				want[sc] = map[schema.Dimension]map[string]findings.Cells{schema.ByCWE: {}, schema.ByFile: {}}
			}
			for dim, g := range map[schema.Dimension]string{schema.ByCWE: strconv.Itoa(i.CWE), schema.ByFile: i.FilePath} {
				if want[sc][dim][g] == nil {
					want[sc][dim][g] = findings.Cells{}
				}
				want[sc][dim][g][i.Urgency+"/"+i.Status]++
			}
		}
		if ids := branches[i.Branch]; !slices.Contains(ids, i.ProjectID) {
			branches[i.Branch] = append(ids, i.ProjectID)
		}
	}
	want[schema.Scope{}] = orEmpty(want[schema.Scope{}])
	for sc, dims := range want {
		for _, dim := range []schema.Dimension{schema.ByCWE, schema.ByFile} {
			got, err := st.Lists.ScopeGroups(ctx, companyID, sc, dim)
			if err != nil {
				return err
			}
			gotMap := map[string]findings.Cells{}
			for _, g := range got {
				if g.Count != g.Cells.Total("", "") {
					return fmt.Errorf("scope %+v %s group %s: count %d != cells %v", sc, dim, g.Group, g.Count, g.Cells)
				}
				gotMap[g.Group] = g.Cells
			}
			if !reflect.DeepEqual(gotMap, dims[dim]) {
				return fmt.Errorf("scope %+v %s counters:\n got %v\nwant %v", sc, dim, gotMap, dims[dim])
			}
			groups, err := st.Lists.ListGroups(ctx, companyID, sc, dim, storepage.Request{Limit: 100})
			if err != nil {
				return err
			}
			page, total := groups.Items, groups.Count()
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
		got, err := st.Lists.BranchProjects(ctx, companyID, b)
		if err != nil || !reflect.DeepEqual(got, ids) {
			return fmt.Errorf("BranchProjects(%q) = %v, %v; want %v", b, got, err, ids)
		}
	}
	if err := checkTrends(ctx, st, companyID, issues); err != nil {
		return err
	}
	return checkLists(ctx, st, companyID)
}

func orEmpty(m map[schema.Dimension]map[string]findings.Cells) map[schema.Dimension]map[string]findings.Cells {
	if m == nil {
		return map[schema.Dimension]map[string]findings.Cells{schema.ByCWE: {}, schema.ByFile: {}}
	}
	return m
}
