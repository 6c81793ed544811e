package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// targets are the positions, among repoProjects' 130 projects, of those
// whose URL holds "acme/target": far enough apart that a page of two
// needs more than one query page (the pager reads 100 items a query when
// the list is filtered).
var targets = []int{0, 60, 110, 125, 129}

// repoProjects creates 130 projects of company 1 (five targets with
// mixed-case URLs, the others elsewhere or without a URL) and a target of
// company 2, and answers company 1's targets' names.
func repoProjects(t *testing.T, st *store.Store) []string {
	t.Helper()
	ctx := context.Background()
	var want []string
	for n := range 130 {
		p := schema.Project{CompanyID: 1, Name: fmt.Sprintf("p%03d", n), RepoURL: fmt.Sprintf("https://github.com/acme/other-%d", n)}
		switch {
		case slices.Contains(targets, n):
			p.RepoURL = fmt.Sprintf("https://GitHub.com/ACME/Target-%d.git", n)
			want = append(want, p.Name)
		case n%7 == 0:
			p.RepoURL = ""
		}
		if _, err := st.Catalog.CreateProject(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: 2, Name: "p000", RepoURL: "https://github.com/acme/target-x"}); err != nil {
		t.Fatal(err)
	}
	return want
}

func names(ps []schema.Project) []string {
	out := make([]string, len(ps))
	for n, p := range ps {
		out[n] = p.Name
	}
	return out
}

// TestProjectsByRepoPage pages the filtered list by token and by number:
// the matches only, ignoring case, in id order, the exact total on every
// page, pages filled across query pages.
func TestProjectsByRepoPage(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	want := repoProjects(t, st)
	for _, size := range []int{1, 2, 3, 100} {
		got := testenv.Pages(t, size, testenv.Total(5), func(q page.Request) (page.Page[schema.Project], error) {
			return st.Catalog.ListProjectsByRepo(ctx, 1, "acme/TARGET", q)
		})
		if !slices.Equal(names(got), want) {
			t.Fatalf("size %d: %v, want %v", size, names(got), want)
		}
	}
	// A page past the end answers the total too.
	past, err := st.Catalog.ListProjectsByRepo(ctx, 1, "acme/target", page.Request{Limit: 2, Offset: 10})
	if err != nil || len(past.Items) != 0 || past.Next != "" || past.Count() != 5 {
		t.Fatalf("past the end: %+v %v", past, err)
	}
	none, err := st.Catalog.ListProjectsByRepo(ctx, 1, "nowhere", page.Request{Limit: 2})
	if err != nil || len(none.Items) != 0 || none.Next != "" || none.Count() != 0 {
		t.Fatalf("no match: %+v %v", none, err)
	}
	// A token opens the list it came from only: not another fragment's,
	// not the unfiltered list, not another company's.
	first, err := st.Catalog.ListProjectsByRepo(ctx, 1, "acme/target", page.Request{Limit: 2})
	if err != nil || first.Next == "" {
		t.Fatalf("%+v %v", first, err)
	}
	for name, read := range map[string]func() error{
		"other fragment": func() error {
			_, err := st.Catalog.ListProjectsByRepo(ctx, 1, "acme/other", page.Request{Limit: 2, Token: first.Next})
			return err
		},
		"unfiltered": func() error {
			_, err := st.Catalog.ListProjects(ctx, 1, page.Request{Limit: 2, Token: first.Next})
			return err
		},
		"other company": func() error {
			_, err := st.Catalog.ListProjectsByRepo(ctx, 2, "acme/target", page.Request{Limit: 2, Token: first.Next})
			return err
		},
	} {
		if err := read(); !errors.Is(err, page.ErrBadToken) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestBackfillProjectRepoKeys strips the lower-cased URL from projects (as
// a table written before it holds them), runs the backfill cut short and
// then to the end, and finds the projects by repo_url again.
func TestBackfillProjectRepoKeys(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	for range 2 {
		if _, err := st.Ledger.NextID(ctx, "company"); err != nil {
			t.Fatal(err)
		}
	}
	want := repoProjects(t, st)
	all, err := st.Catalog.AllProjects(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if err := st.Ledger.T.Update(ctx, p.Key, expression.Remove(expression.Name("repo_url_lower")), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Ledger.T.DeleteItem(ctx, schema.ProjectRepoBackfillKey); err != nil {
		t.Fatal(err)
	}
	stale, err := st.Catalog.ListProjectsByRepo(ctx, 1, "acme/target", page.Request{Limit: 10})
	if err != nil || len(stale.Items) != 0 {
		t.Fatalf("before the backfill: %+v %v", stale, err)
	}
	done, written, err := st.Catalog.BackfillProjectRepoKeys(ctx, st.Clock().Add(-time.Second))
	if err != nil || done || written != 0 {
		t.Fatalf("out of time: done %v, %d written, %v", done, written, err)
	}
	done, written, err = st.Catalog.BackfillProjectRepoKeys(ctx, st.Clock().Add(time.Minute))
	if withURL := 130 - 18; err != nil || !done || written != withURL {
		t.Fatalf("done %v, %d written (want %d), %v", done, written, withURL, err)
	}
	got := testenv.Pages(t, 2, testenv.Total(5), func(q page.Request) (page.Page[schema.Project], error) {
		return st.Catalog.ListProjectsByRepo(ctx, 1, "acme/target", q)
	})
	if !slices.Equal(names(got), want) {
		t.Fatalf("%v, want %v", names(got), want)
	}
	if done, written, err = st.Catalog.BackfillProjectRepoKeys(ctx, st.Clock().Add(time.Minute)); err != nil || !done || written != 0 {
		t.Fatalf("once done: done %v, %d written, %v", done, written, err)
	}
}
