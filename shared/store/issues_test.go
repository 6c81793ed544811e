package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
)

// someIssues makes n issues spread over two projects, three branches, CWEs,
// files, urgencies and statuses, with deterministic ids.
func someIssues(n int, projects ...int64) []findings.Issue {
	var out []findings.Issue
	for k := 0; k < n; k++ {
		out = append(out, findings.Issue{
			ID:        fmt.Sprintf("00000000-0000-4000-8000-%012d", k),
			ProjectID: projects[k%len(projects)], ProjectName: "p", Branch: []string{"main", "dev", "feat/#1"}[k%3],
			CWE: []int{79, 89, 0, 22, 79}[k%5], FilePath: fmt.Sprintf("src/f%d.go", k%7),
			Urgency: findings.Urgencies[k%4], Status: findings.Statuses[k%6], Title: "t",
			CreatedAt: fmt.Sprintf("2025-01-%02dT10:00:00Z", 1+k%28),
		})
	}
	return out
}

func TestIssueWritePathKeepsCountersExact(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	const company = 7
	issues := someIssues(150, 1, 2)
	n, err := bulkload.CreateIssues(ctx, st, company, issues)
	if err != nil || n != 150 {
		t.Fatalf("CreateIssues = %d, %v", n, err)
	}
	testenv.Recount(t, st, company)

	// A retried batch (same ids, some new) creates only the new ones.
	n, err = bulkload.CreateIssues(ctx, st, company, someIssues(160, 1, 2))
	if err != nil || n != 10 {
		t.Fatalf("retried CreateIssues = %d, %v; want 10 new", n, err)
	}
	testenv.Recount(t, st, company)

	// Status changes move counts; deletes remove them; groups that empty
	// out disappear.
	for k := 0; k < 40; k++ {
		if _, err := bulkload.SetIssueStatus(ctx, st, company, issues[k].ID, "fixed"); err != nil {
			t.Fatal(err)
		}
	}
	for k := 40; k < 160; k += 3 {
		if err := bulkload.DeleteIssue(ctx, st, company, fmt.Sprintf("00000000-0000-4000-8000-%012d", k)); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Recount(t, st, company)
	got, err := st.Lists.GetIssue(ctx, company, issues[3].ID)
	if err != nil || got.Status != "fixed" {
		t.Fatalf("GetIssue = %+v, %v", got, err)
	}

	if err := bulkload.DeleteIssue(ctx, st, company, issues[43].ID); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("deleting a deleted issue: %v", err)
	}
	if _, err := bulkload.SetIssueStatus(ctx, st, company+1, issues[0].ID, "open"); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("another company's issue: %v", err)
	}
	bad := someIssues(1, 1)
	bad[0].Urgency = "critical"
	if _, err := bulkload.CreateIssues(ctx, st, company, bad); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("invalid urgency: %v", err)
	}
}

func TestConcurrentWritersKeepCountersExact(t *testing.T) {
	t.Parallel()
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
			_, err := bulkload.CreateIssues(ctx, st, company, issues[from:min(from+40, len(issues))])
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
	testenv.Recount(t, st, company)
}
