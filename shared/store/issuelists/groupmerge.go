package issuelists

import (
	"context"
	"strings"

	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// ListMergedGroups is ListGroups for what no stored order holds: the
// groups of several scopes added up, or (status not "") the groups counted
// in one status only, ordered by that count. Its rows are computed: a sum
// over scopes, or one status's cells of a counter, exist in no item and
// no index orders them, so the page is cut, by number, from every group
// of the scopes (MergedGroups). It reads group counters, one item per
// group and scope, never issues: its cost grows with the scopes' groups
// (by CWE at most the CWE catalog's ids and `unknown`; by file the files
// that hold issues), not with their issues. A token is ErrBadToken (the
// groups page by number).
func (x *Lists) ListMergedGroups(ctx context.Context, companyID int64, scopes []schema.Scope, dim schema.Dimension, status string, q page.Request) (page.Page[findings.GroupCount], error) {
	if q.Token != "" {
		return page.Page[findings.GroupCount]{}, page.ErrBadToken
	}
	all, err := x.MergedGroups(ctx, companyID, scopes, dim)
	if err != nil {
		return page.Page[findings.GroupCount]{}, err
	}
	if status != "" {
		all = inStatus(all, status)
	}
	return pageByNumber(all, q), nil
}

// inStatus is groups reduced to their cells in one status, the groups
// with none left out, in the total order of ListGroups by that count.
func inStatus(groups []findings.GroupCount, status string) []findings.GroupCount {
	var out []findings.GroupCount
	for _, g := range groups {
		cells := findings.Cells{}
		for k, n := range g.Cells {
			if strings.HasSuffix(k, "/"+status) {
				cells[k] = n
			}
		}
		if n := cells.Total("", ""); n > 0 {
			out = append(out, findings.GroupCount{Dim: g.Dim, Group: g.Group, Count: n, Cells: cells})
		}
	}
	SortGroups(out)
	return out
}
