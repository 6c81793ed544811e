package issuelists_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// ListIssues answers page.Page: offset, a next token exactly while an
// issue follows, and the counters' total, by token and by number, for the
// whole list, a CWE, a status, a scope, and a file and CWE together (the
// uncounted filter, whose total is what it reads). Another company's list
// is empty.
func TestListIssuesPages(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	const company = 4
	issues := make([]findings.Issue, 23)
	for k := range issues {
		issues[k] = findings.Issue{
			ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", k), ProjectID: 1 + int64(k%2), ProjectName: "p", Branch: "main",
			CWE: []int{79, 89, findings.NoCWE}[k%3], FilePath: fmt.Sprintf("src/f%d.go", k%4), Urgency: "HI",
			Status: []string{"open", "fixed"}[k%2], Title: "t", CreatedAt: fmt.Sprintf("2026-01-%02dT10:00:00Z", 1+k),
		}
	}
	if err := bulkload.Issues(ctx, st, company, issues, 2, nil); err != nil {
		t.Fatal(err)
	}
	cwe := 79
	for _, c := range []struct {
		name string
		f    issuelists.IssueFilter
		want int64
	}{
		{"all", issuelists.IssueFilter{}, 23},
		{"cwe", issuelists.IssueFilter{CWE: &cwe}, 8},
		{"status", issuelists.IssueFilter{Status: "fixed"}, 11},
		{"scope", issuelists.IssueFilter{Scopes: []schema.Scope{{ProjectID: 2}}}, 11},
		{"file and cwe", issuelists.IssueFilter{FilePath: "src/f0.go", CWE: &cwe}, 2},
	} {
		got := testenv.Pages(t, 3, testenv.Total(c.want), func(q page.Request) (page.Page[findings.Issue], error) {
			return st.Lists.ListIssues(ctx, company, c.f, q)
		})
		for _, i := range got {
			if !c.f.Matches(i) {
				t.Fatalf("%s: issue %s does not match", c.name, i.ID)
			}
		}
	}
	testenv.Pages(t, 3, testenv.Total(0), func(q page.Request) (page.Page[findings.Issue], error) {
		return st.Lists.ListIssues(ctx, company+1, issuelists.IssueFilter{}, q)
	})
}

// ListIssuesAmong and ListIssuesWithout page by number only: a page at
// its offset, the count of what they list (the ids that match; the list
// less them), no next token, and a token refused.
func TestListIssuesAmongAndWithout(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	const company = 5
	issues := make([]findings.Issue, 12)
	for k := range issues {
		issues[k] = findings.Issue{
			ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", k), ProjectID: 1, ProjectName: "p", Branch: "main",
			CWE: 79, FilePath: "src/a.go", Urgency: "HI", Status: []string{"open", "fixed"}[k%2], Title: "t",
			CreatedAt: fmt.Sprintf("2026-01-%02dT10:00:00Z", 1+k),
		}
	}
	if err := bulkload.Issues(ctx, st, company, issues, 2, nil); err != nil {
		t.Fatal(err)
	}
	open := issuelists.IssueFilter{Status: "open"}
	whole, err := st.Lists.ListIssues(ctx, company, open, page.Request{Limit: 100})
	if err != nil || whole.Count() != 6 {
		t.Fatalf("open issues: %d (%v)", whole.Count(), err)
	}
	ids := []string{issues[0].ID, issues[1].ID, issues[2].ID, issues[4].ID} // three open, one fixed
	without := map[string]bool{}
	for _, id := range ids {
		without[id] = true
	}
	var rest []findings.Issue
	for _, i := range whole.Items {
		if !without[i.ID] {
			rest = append(rest, i)
		}
	}
	among, err := st.Lists.ListIssuesAmong(ctx, company, open, ids, page.Request{Limit: 2, Offset: 2})
	if err != nil || among.Offset != 2 || among.Next != "" || among.Count() != 3 || len(among.Items) != 1 || !open.Matches(among.Items[0]) {
		t.Fatalf("among, page 2: %+v (%v)", among, err)
	}
	past, err := st.Lists.ListIssuesAmong(ctx, company, open, ids, page.Request{Limit: 2, Offset: 4})
	if err != nil || past.Items == nil || len(past.Items) != 0 || past.Count() != 3 {
		t.Fatalf("among, past the end: %+v (%v)", past, err)
	}
	w, err := st.Lists.ListIssuesWithout(ctx, company, open, without, page.Request{Limit: 2, Offset: 1})
	if err != nil || w.Offset != 1 || w.Next != "" || w.Count() != 3 || !reflect.DeepEqual(w.Items, rest[1:3]) {
		t.Fatalf("without, page 2 of 1: %+v (%v); want %v", w, err, rest[1:3])
	}
	if _, err := st.Lists.ListIssuesAmong(ctx, company, open, ids, page.Request{Limit: 2, Token: whole.Next + "x"}); !errors.Is(err, page.ErrBadToken) {
		t.Fatalf("among by token: %v", err)
	}
	if _, err := st.Lists.ListIssuesWithout(ctx, company, open, without, page.Request{Limit: 2, Token: "t"}); !errors.Is(err, page.ErrBadToken) {
		t.Fatalf("without by token: %v", err)
	}
}
