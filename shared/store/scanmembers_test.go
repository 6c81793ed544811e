package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
)

// A scan of 600 issues keeps its membership in three chunks: its list
// pages alike by number and by cursor for page sizes that cross chunk
// boundaries and that end on them, every reported issue is found in its
// chunk, and a token opens no other scan's list.
func TestScanMembershipChunks(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	var fs []finding
	for k := range 600 {
		fs = append(fs, finding{fp: fmt.Sprint("m", k), cwe: 79})
	}
	sc, _ := w.scan(t, "main", "gosec", fs...)
	other, _ := w.scan(t, "dev", "gosec", fs[:300]...)
	sc, err := w.st.Scans.GetScan(ctx, w.company, sc.ID)
	if err != nil || sc.Findings != 600 {
		t.Fatalf("scan: %+v %v", sc, err)
	}
	var want []string
	for _, f := range fs {
		want = append(want, findings.IssueID(w.company, w.project, "main", "gosec", f.fp))
	}
	slices.Sort(want)

	for _, size := range []int{7, 64, 100} {
		var byNumber, byCursor []string
		token := ""
		pages := (600 + size - 1) / size
		for p := range pages {
			nPage, err := w.st.Lists.ListScanIssues(ctx, w.company, sc, page.Request{Limit: size, Offset: p * size})
			n, nres := nPage.Items, nPage
			if err != nil {
				t.Fatal(err)
			}
			cPage, err := w.st.Lists.ListScanIssues(ctx, w.company, sc, page.Request{Limit: size, Token: token})
			c, cres := cPage.Items, cPage
			if err != nil {
				t.Fatal(err)
			}
			last := p == pages-1
			if nres.Offset != p*size || cres.Offset != p*size || (nres.Next == "") != last || (cres.Next == "") != last || nres.Count() != 600 || cres.Count() != 600 {
				t.Fatalf("size %d page %d: by number %+v, by cursor %+v", size, p+1, nres, cres)
			}
			for _, i := range n {
				byNumber = append(byNumber, i.ID)
			}
			for _, i := range c {
				byCursor = append(byCursor, i.ID)
			}
			token = cres.Next
		}
		if !slices.Equal(byNumber, want) || !slices.Equal(byCursor, want) {
			t.Fatalf("size %d: %d by number, %d by cursor, want %d in id order", size, len(byNumber), len(byCursor), len(want))
		}
	}

	for k, id := range want {
		if k%37 != 0 && k != len(want)-1 {
			continue
		}
		if ok, err := w.st.Lists.ScanReported(ctx, w.company, sc.ID, id); err != nil || !ok {
			t.Fatalf("issue %d (%s) not found in its scan: %v", k, id, err)
		}
		if ok, err := w.st.Lists.ScanReported(ctx, w.company+1, sc.ID, id); err != nil || ok {
			t.Fatalf("issue %d found through another company: %v", k, err)
		}
	}
	for _, id := range []string{"00000000-0000-4000-8000-000000000000", "ffffffff-ffff-4fff-bfff-ffffffffffff", uuid.NewString()} {
		if ok, err := w.st.Lists.ScanReported(ctx, w.company, sc.ID, id); err != nil || ok {
			t.Fatalf("%s reported: %v", id, err)
		}
	}

	resPage, err := w.st.Lists.ListScanIssues(ctx, w.company, sc, page.Request{Limit: 50})

	res := resPage
	if err != nil || res.Next == "" {
		t.Fatalf("first page: %+v %v", res, err)
	}
	if _, err := w.st.Lists.ListScanIssues(ctx, w.company, other, page.Request{Limit: 50, Token: res.Next}); !errors.Is(err, page.ErrBadToken) {
		t.Fatalf("another scan's token: %v", err)
	}
	if _, err := w.st.Lists.ListScanIssues(ctx, w.company+1, sc, page.Request{Limit: 50, Token: res.Next}); !errors.Is(err, page.ErrBadToken) {
		t.Fatalf("another company's token: %v", err)
	}

	// Applying the scan again writes the same chunks.
	if res, err := w.st.Findings.ApplyScan(ctx, w.company, sc, w.found(sc, fs...)); err != nil || res.Unchanged != 600 {
		t.Fatalf("applied again: %+v %v", res, err)
	}
	n := 0
	if err := w.st.Lists.EachScanIssue(ctx, w.company, sc.ID, func(findings.Issue) error { n++; return nil }); err != nil || n != 600 {
		t.Fatalf("after a second apply: %d issues, %v", n, err)
	}
}

// A scan whose findings each have a file path and a branch of the longest
// accepted lengths fills its counter journal items to their largest size:
// they are stored, applied and counted exactly.
func TestLargestJournalItems(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	branch := strings.Repeat("b", 1020)
	var fs []finding
	for k := range 200 {
		fs = append(fs, finding{fp: fmt.Sprintf("%03d-%s", k, strings.Repeat("p", 750)), cwe: 79})
	}
	sc, _ := w.scan(t, branch, "gosec", fs...)
	sc, err := w.st.Scans.GetScan(context.Background(), w.company, sc.ID)
	if err != nil || sc.Status != scans.ScanComplete || sc.Findings != 200 {
		t.Fatalf("scan: %+v %v", sc, err)
	}
	testenv.Recount(t, w.st, w.company)
}
