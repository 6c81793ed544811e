package issuelists_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// The accepted risks ending before a date (GET /issues with
// accepted_until_before) page by number: soonest end first, the count of
// the matches on every page, for the company and for a scope; a token is
// refused, another company's list is empty.
func TestListAcceptedPages(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	const company = 6
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	issues := make([]findings.Issue, 14)
	var want []string // ending before base+11 days, soonest first
	for k := range issues {
		issues[k] = findings.Issue{
			ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", 13-k), ProjectID: 1 + int64(k%2), ProjectName: "p", Branch: "main",
			CWE: 79, FilePath: "src/a.go", Urgency: "HI", Status: "open", Title: "t", CreatedAt: "2026-01-01T10:00:00Z",
		}
		if k%3 != 2 {
			issues[k].Status = "accepted_risk"
			issues[k].ExpiresAt = base.AddDate(0, 0, k).Format(time.RFC3339)
			if k < 11 {
				want = append(want, issues[k].ID)
			}
		}
	}
	if err := bulkload.Issues(ctx, st, company, issues, 2, nil); err != nil {
		t.Fatal(err)
	}
	f := issuelists.IssueFilter{AcceptedBefore: base.AddDate(0, 0, 11)}
	read := func(companyID int64, f issuelists.IssueFilter) func(page.Request) (page.Page[findings.Issue], error) {
		return func(q page.Request) (page.Page[findings.Issue], error) {
			return st.Lists.ListIssues(ctx, companyID, f, q)
		}
	}
	for _, size := range []int{1, 3, 8, 20} {
		got := testenv.PagesByNumber(t, size, int64(len(want)), read(company, f))
		for n, i := range got {
			if i.ID != want[n] {
				t.Fatalf("size %d: issue %d is %s, want %s", size, n, i.ID, want[n])
			}
		}
	}
	// The whole list in one page is what testenv.Pages reads.
	testenv.Pages(t, len(want), testenv.Total(int64(len(want))), read(company, f))
	scoped := f
	scoped.Scopes = []schema.Scope{{ProjectID: 2}}
	for _, i := range testenv.PagesByNumber(t, 3, 4, read(company, scoped)) {
		if i.ProjectID != 2 || i.Status != "accepted_risk" {
			t.Fatalf("scoped: %+v", i)
		}
	}
	testenv.PagesByNumber(t, 3, 0, read(company+1, f))
	first, err := st.Lists.ListIssues(ctx, company, issuelists.IssueFilter{}, page.Request{Limit: 2})
	if err != nil || first.Next == "" {
		t.Fatalf("%+v %v", first, err)
	}
	if _, err := st.Lists.ListIssues(ctx, company, f, page.Request{Limit: 2, Token: first.Next}); !errors.Is(err, page.ErrBadToken) {
		t.Fatalf("by token: %v", err)
	}
}
