package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/testenv"
)

// recount computes every group counter of a company from its issues and
// checks the stored counters, the per-scope group totals and the branch
// index against it.
func recount(t *testing.T, st *store.Store, companyID int64) {
	t.Helper()
	ctx := context.Background()
	var issues []store.Issue
	if err := st.EachIssue(ctx, companyID, func(i store.Issue) error { issues = append(issues, i); return nil }); err != nil {
		t.Fatal(err)
	}
	want := map[store.Scope]map[store.Dimension]map[string]store.Cells{}
	branches := map[string][]int64{}
	for _, i := range issues {
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
		if ids := branches[i.Branch]; !containsID(ids, i.ProjectID) {
			branches[i.Branch] = append(ids, i.ProjectID)
		}
	}
	want[store.Scope{}] = orEmpty(want[store.Scope{}])
	for sc, dims := range want {
		for _, dim := range []store.Dimension{store.ByCWE, store.ByFile} {
			got, err := st.ScopeGroups(ctx, companyID, sc, dim)
			if err != nil {
				t.Fatal(err)
			}
			gotMap := map[string]store.Cells{}
			for _, g := range got {
				if g.Count != g.Cells.Total("", "") {
					t.Fatalf("scope %+v %s group %s: count %d != cells %v", sc, dim, g.Group, g.Count, g.Cells)
				}
				gotMap[g.Group] = g.Cells
			}
			if !reflect.DeepEqual(gotMap, dims[dim]) {
				t.Fatalf("scope %+v %s counters:\n got %v\nwant %v", sc, dim, gotMap, dims[dim])
			}
			page, total, err := st.GroupsPage(ctx, companyID, sc, dim, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			if total != int64(len(dims[dim])) || len(page) != min(100, len(dims[dim])) {
				t.Fatalf("scope %+v %s: total_groups %d, page %d, want %d", sc, dim, total, len(page), len(dims[dim]))
			}
		}
	}
	for b, ids := range branches {
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		got, err := st.BranchProjects(ctx, companyID, b)
		if err != nil || !reflect.DeepEqual(got, ids) {
			t.Fatalf("BranchProjects(%q) = %v, %v; want %v", b, got, err, ids)
		}
	}
}

func orEmpty(m map[store.Dimension]map[string]store.Cells) map[store.Dimension]map[string]store.Cells {
	if m == nil {
		return map[store.Dimension]map[string]store.Cells{store.ByCWE: {}, store.ByFile: {}}
	}
	return m
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// someIssues makes n issues spread over two projects, three branches, CWEs,
// files, urgencies and statuses, with deterministic ids.
func someIssues(n int, projects ...int64) []store.Issue {
	var out []store.Issue
	for k := 0; k < n; k++ {
		out = append(out, store.Issue{
			ID:        fmt.Sprintf("00000000-0000-4000-8000-%012d", k),
			ProjectID: projects[k%len(projects)], ProjectName: "p", Branch: []string{"main", "dev", "feat/#1"}[k%3],
			CWE: []int{79, 89, 0, 22, 79}[k%5], FilePath: fmt.Sprintf("src/f%d.go", k%7),
			Urgency: store.Urgencies[k%4], Status: store.Statuses[k%6], Title: "t",
			CreatedAt: fmt.Sprintf("2025-01-%02dT10:00:00Z", 1+k%28),
		})
	}
	return out
}

func TestIssueWritePathKeepsCountersExact(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	const company = 7
	issues := someIssues(150, 1, 2)
	n, err := st.CreateIssues(ctx, company, issues)
	if err != nil || n != 150 {
		t.Fatalf("CreateIssues = %d, %v", n, err)
	}
	recount(t, st, company)

	// A retried batch (same ids, some new) creates only the new ones.
	n, err = st.CreateIssues(ctx, company, someIssues(160, 1, 2))
	if err != nil || n != 10 {
		t.Fatalf("retried CreateIssues = %d, %v; want 10 new", n, err)
	}
	recount(t, st, company)

	// Status changes move counts; deletes remove them; groups that empty
	// out disappear.
	for k := 0; k < 40; k++ {
		if _, err := st.SetIssueStatus(ctx, company, issues[k].ID, "fixed"); err != nil {
			t.Fatal(err)
		}
	}
	for k := 40; k < 160; k += 3 {
		if err := st.DeleteIssue(ctx, company, fmt.Sprintf("00000000-0000-4000-8000-%012d", k)); err != nil {
			t.Fatal(err)
		}
	}
	recount(t, st, company)
	got, err := st.GetIssue(ctx, company, issues[3].ID)
	if err != nil || got.Status != "fixed" {
		t.Fatalf("GetIssue = %+v, %v", got, err)
	}

	if err := st.DeleteIssue(ctx, company, issues[43].ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleting a deleted issue: %v", err)
	}
	if _, err := st.SetIssueStatus(ctx, company+1, issues[0].ID, "open"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another company's issue: %v", err)
	}
	bad := someIssues(1, 1)
	bad[0].Urgency = "critical"
	if _, err := st.CreateIssues(ctx, company, bad); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("invalid urgency: %v", err)
	}
}

func TestConcurrentWritersKeepCountersExact(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	const company = 9
	issues := someIssues(120, 1, 2, 3)
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// Overlapping slices: every issue is written by two workers.
			from := w * 20
			_, err := st.CreateIssues(ctx, company, issues[from:min(from+40, len(issues))])
			errs <- err
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	recount(t, st, company)
}

func TestBulkLoaderWritesWhatTheWritePathWrites(t *testing.T) {
	viaWritePath, viaLoader := testenv.NewStore(t), testenv.NewStore(t)
	ctx := context.Background()
	const company = 5
	issues := someIssues(230, 1, 2, 3)
	if _, err := viaWritePath.CreateIssues(ctx, company, issues); err != nil {
		t.Fatal(err)
	}
	loaded := 0
	if err := viaLoader.BulkLoadIssues(ctx, company, issues, 4, func(n, _ int) { loaded += n }); err != nil {
		t.Fatal(err)
	}
	var a, b []map[string]any
	for _, pk := range store.CompanyPartitions(company) {
		x, err := store.PartitionItems(ctx, viaWritePath, pk)
		if err != nil {
			t.Fatal(err)
		}
		y, err := store.PartitionItems(ctx, viaLoader, pk)
		if err != nil {
			t.Fatal(err)
		}
		a, b = append(a, x...), append(b, y...)
	}
	if len(a) != len(b) || loaded != len(b) || len(a) < 230+6 {
		t.Fatalf("write path stored %d items, loader %d (reported %d)", len(a), len(b), loaded)
	}
	for n := range a {
		// Versions count writes: the write path wrote some counters more
		// than once.
		delete(a[n], "ver")
		delete(b[n], "ver")
		if !reflect.DeepEqual(a[n], b[n]) {
			t.Fatalf("item %d differs:\n write path %v\n loader     %v", n, a[n], b[n])
		}
	}
	recount(t, viaLoader, company)
}
