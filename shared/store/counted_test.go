package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/recount"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	storequality "github.com/acme/codescan-api/shared/store/quality"
	storesca "github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// findingsOf are a scan's quality and SCA findings as an ingestion writes
// them: ids from the finding's identity, so writing them again is the same.
func findingsOf(sc scans.Scan, n int, classes ...string) ([]storequality.Issue, []storesca.Issue) {
	var qs []storequality.Issue
	var sca []storesca.Issue
	for k := range n {
		qs = append(qs, storequality.Issue{
			ID:     findings.IssueID(sc.CompanyID, sc.ProjectID, sc.Branch, "lint", fmt.Sprintf("q%d", k)),
			ScanID: sc.ID, ProjectID: sc.ProjectID, CreatedAt: sc.CreatedAt, Urgency: "LO", Status: "open",
			Classification: storequality.Classification{ID: "R", Name: classes[k%len(classes)]},
		})
		sca = append(sca, storesca.Issue{
			ID:        findings.IssueID(sc.CompanyID, sc.ProjectID, sc.Branch, "osv", fmt.Sprintf("s%d", k)),
			ProjectID: sc.ProjectID, Branch: sc.Branch, Severity: "HIGH", Package: storesca.Package{Name: fmt.Sprint("pkg", k)},
		})
	}
	return qs, sca
}

func ingest(t *testing.T, st *store.Store, sc scans.Scan, qs []storequality.Issue, sca []storesca.Issue) {
	t.Helper()
	ctx := context.Background()
	if err := st.Quality.PutQualityIssues(ctx, sc.CompanyID, qs); err != nil {
		t.Fatal(err)
	}
	if err := st.SCA.PutScanSCAIssues(ctx, sc.CompanyID, sc, sca); err != nil {
		t.Fatal(err)
	}
}

// totals are what the lists answer as their totals.
func totals(t *testing.T, st *store.Store, sc scans.Scan) (quality, sca, scanSCA int, classes []storequality.Class) {
	t.Helper()
	ctx := context.Background()
	one := page.Request{Limit: 1}
	qualityPage, err1 := st.Quality.ListProjectQualityIssues(ctx, sc.CompanyID, sc.ProjectID, one)
	scaPage, err2 := st.SCA.ListSCAIssues(ctx, sc.CompanyID, 0, one)
	scanSCAPage, err3 := st.SCA.ListScanSCAIssues(ctx, sc.CompanyID, sc.ID, one)
	classes, err4 := st.Quality.QualityClasses(ctx, sc.CompanyID, sc.ID)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		t.Fatal(err)
	}
	return int(qualityPage.Count()), int(scaPage.Count()), int(scanSCAPage.Count()), classes
}

// crashApply fails, once, the first transaction that applies a journal
// item to the counters: a writer that dies after writing its findings.
func crashApply(st *store.Store) (restore func(), crashed *atomic.Bool) {
	crashed = &atomic.Bool{}
	before := st.Client()
	opts := st.Client().Options()
	opts.APIOptions = append(slices.Clone(opts.APIOptions), func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("crash-apply",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok && !crashed.Load() {
					for _, it := range tx.TransactItems {
						if it.Delete == nil {
							continue
						}
						pk, _ := it.Delete.Key["PK"].(*types.AttributeValueMemberS)
						if pk != nil && strings.Contains(pk.Value, "#CJ#") && crashed.CompareAndSwap(false, true) {
							return middleware.InitializeOutput{}, middleware.Metadata{}, errors.New("crashed")
						}
					}
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
	st.SetClient(dynamodb.New(opts))
	return func() { st.SetClient(before) }, crashed
}

func TestListCountersAreExact(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	const company = 31
	p, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: company, Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	newScan := func(at string) scans.Scan {
		sc, err := st.Scans.CreateScan(ctx, scans.Scan{CompanyID: company, ProjectID: p.ID, Branch: "main", Engine: "lint", CreatedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	a := newScan("2025-03-01T10:00:00Z")
	qa, sa := findingsOf(a, 120, "Complexity", "Dead Code", "Style")
	ingest(t, st, a, qa, sa)
	check := func(wantQuality, wantSCA int, sc scans.Scan, wantScanSCA int) {
		t.Helper()
		q, s, ss, _ := totals(t, st, sc)
		if q != wantQuality || s != wantSCA || ss != wantScanSCA {
			t.Fatalf("totals: quality %d, SCA %d, scan SCA %d; want %d, %d, %d", q, s, ss, wantQuality, wantSCA, wantScanSCA)
		}
		testenv.Recount(t, st, company)
	}
	check(120, 120, a, 120)
	if _, _, _, cls := totals(t, st, a); len(cls) != 3 || cls[0].Count+cls[1].Count+cls[2].Count != 120 {
		t.Fatalf("directory: %+v", cls)
	}

	// Ingesting the same scan again counts nothing.
	ingest(t, st, a, qa, sa)
	check(120, 120, a, 120)

	// A second scan of the branch reports the same SCA findings (same
	// ids: the company's and project's totals stay) and its own quality
	// findings; eight writers at once ingest it.
	b := newScan("2025-03-02T10:00:00Z")
	qb, sb := findingsOf(b, 80, "Complexity", "Naming")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- errors.Join(st.Quality.PutQualityIssues(ctx, company, qb), st.SCA.PutScanSCAIssues(ctx, company, b, sb))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	check(200, 120, b, 80)

	// A writer that dies after writing its findings leaves a journal
	// that the counters owe (a recount sees the difference); the retry
	// settles it.
	c := newScan("2025-03-03T10:00:00Z")
	qc, sc := findingsOf(c, 60, "Style")
	restore, crashed := crashApply(st)
	err = st.Quality.PutQualityIssues(ctx, company, qc)
	restore()
	if err == nil || !crashed.Load() {
		t.Fatalf("crash not injected: %v", err)
	}
	if err := recount.Check(ctx, recount.StoreOf(st), company); err == nil {
		t.Fatal("a recount must see the counters short while the journal is not applied")
	}
	ingest(t, st, c, qc, sc)
	check(260, 120, c, 60)

	// A finding rewritten under another classification moves between
	// directory entries; the project's total stays.
	moved := qc[0]
	moved.Classification.Name = "Naming"
	if err := st.Quality.PutQualityIssues(ctx, company, []storequality.Issue{moved}); err != nil {
		t.Fatal(err)
	}
	check(260, 120, c, 60)
	if _, _, _, cls := totals(t, st, c); len(cls) != 2 {
		t.Fatalf("directory after the move: %+v", cls)
	}

	// Another company's lists count nothing of this one's.
	if other, err := st.SCA.ListSCAIssues(ctx, company+1, 0, page.Request{Limit: 1}); err != nil || other.Count() != 0 {
		t.Fatalf("other company: %d, %v", other.Count(), err)
	}
}
