package issuelists_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// ListMergedGroups pages by number the groups of two scopes added up, and
// the groups counted in one status: each group's count is the sum of its
// issues in the scopes (in the status), count descending then group key,
// the number of groups as the total on every page.
func TestListMergedGroupsPages(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	const company = 7
	issues := make([]findings.Issue, 40)
	all, fixed := map[string]int64{}, map[string]int64{}
	for k := range issues {
		i := findings.Issue{
			ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", k), ProjectID: 1 + int64(k%3), ProjectName: "p", Branch: "main",
			CWE: 20 + k%11, FilePath: fmt.Sprintf("src/f%d.go", k%5), Urgency: "HI", Status: []string{"open", "fixed"}[k/3%2], Title: "t",
			CreatedAt: fmt.Sprintf("2026-01-%02dT10:00:00Z", 1+k%28),
		}
		if i.ProjectID != 3 { // outside the scopes read
			g := fmt.Sprint(i.CWE)
			all[g]++
			if i.Status == "fixed" {
				fixed[g]++
			}
		}
		issues[k] = i
	}
	if err := bulkload.Issues(ctx, st, company, issues, 2, nil); err != nil {
		t.Fatal(err)
	}
	scopes := []schema.Scope{{ProjectID: 1}, {ProjectID: 2}}
	for _, c := range []struct {
		status string
		want   map[string]int64
	}{{"", all}, {"fixed", fixed}} {
		got := testenv.PagesByNumber(t, 3, int64(len(c.want)), func(q page.Request) (page.Page[findings.GroupCount], error) {
			return st.Lists.ListMergedGroups(ctx, company, scopes, schema.ByCWE, c.status, q)
		})
		for n, g := range got {
			if g.Count != c.want[g.Group] {
				t.Fatalf("status %q: group %s counts %d, want %d", c.status, g.Group, g.Count, c.want[g.Group])
			}
			if n > 0 {
				p := got[n-1]
				if p.Count < g.Count || p.Count == g.Count && schema.GroupSortKey(p.Dim, p.Group) >= schema.GroupSortKey(g.Dim, g.Group) {
					t.Fatalf("status %q: %s (%d) before %s (%d)", c.status, p.Group, p.Count, g.Group, g.Count)
				}
			}
		}
	}
	if _, err := st.Lists.ListMergedGroups(ctx, company, scopes, schema.ByCWE, "", page.Request{Limit: 3, Token: "t"}); !errors.Is(err, page.ErrBadToken) {
		t.Fatalf("by token: %v", err)
	}
}
