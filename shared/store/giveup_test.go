package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/recount"
	"github.com/acme/codescan-api/shared/scanlife"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

// crashOn fails, once, the nth DynamoDB call that match accepts: a worker
// that dies there.
func crashOn(st *store.Store, nth int64, match func(params any) bool) *atomic.Int64 {
	seen := &atomic.Int64{}
	opts := st.Client().Options()
	opts.APIOptions = append(slices.Clone(opts.APIOptions), func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("crash-on",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if match(in.Parameters) && seen.Add(1) == nth {
					return middleware.InitializeOutput{}, middleware.Metadata{}, errors.New("crashed")
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
	st.SetClient(dynamodb.New(opts))
	return seen
}

// manyFindings are n findings, fingerprints prefix and a number, a file
// each, their CWEs taking turns.
func manyFindings(prefix string, n int, cwes ...int) []finding {
	fs := make([]finding, n)
	for k := range fs {
		fs[k] = finding{fmt.Sprintf("%s%03d", prefix, k), cwes[k%len(cwes)]}
	}
	return fs
}

// processing is a new scan of branch and tool t, still processing.
func (w *branchWorld) processing(t *testing.T, branch string) scans.Scan {
	t.Helper()
	sc, err := w.st.Scans.CreateScan(context.Background(), scans.Scan{ID: uuid.NewString(), CompanyID: w.company, ProjectID: w.project,
		Branch: branch, Engine: "sarif", Tool: "t", Status: scans.ScanProcessing, CreatedAt: w.clock.Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// issueBatch matches a BatchWriteItem of issues.
func issueBatch(p any) bool {
	in, ok := p.(*dynamodb.TransactWriteItemsInput)
	if !ok {
		return false
	}
	for _, it := range in.TransactItems {
		if it.Put != nil && it.Put.ConditionExpression == nil {
			if sk, ok := it.Put.Item["SK"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(sk.Value, "ISSUE#") {
				return true
			}
		}
	}
	return false
}

// journalPayment matches a transaction that pays a scan journal's item.
func journalPayment(p any) bool {
	in, ok := p.(*dynamodb.TransactWriteItemsInput)
	if !ok {
		return false
	}
	for _, it := range in.TransactItems {
		if it.Delete != nil {
			if pk, ok := it.Delete.Key["PK"].(*types.AttributeValueMemberS); ok && strings.Contains(pk.Value, "#JRNL#") {
				return true
			}
		}
	}
	return false
}

// A scan whose writer gives up midway, its issues partly written and its
// journal partly paid, is failed (the stalled sweep's way): the counters
// then equal the issues it wrote, however they were triaged meanwhile, and
// a later scan of the branch creates the rest and counts them once.
func TestScanGivenUpLeavesCountersEqualToItsIssues(t *testing.T) {
	t.Parallel()
	fs := manyFindings("f", 600, 79, 89, 22, 78, 502, 611) // a file each: some 1,800 counters, 19 journal chunks
	for _, tc := range []struct {
		name    string
		nth     int64
		match   func(any) bool
		partial bool // the crash leaves issues unwritten
	}{
		{"while writing issues", 3, issueBatch, true},
		{"while paying the journal", 4, journalPayment, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newBranchWorld(t)
			ctx := context.Background()
			sc := w.processing(t, "main")
			crashes := crashOn(w.st, tc.nth, tc.match)
			if _, err := w.st.Findings.ApplyScan(ctx, w.company, sc, w.found(sc, fs...)); err == nil || !strings.Contains(err.Error(), "crashed") {
				t.Fatalf("the crashed apply answered %v (%d matching calls)", err, crashes.Load())
			}
			stored := func() []findings.Issue {
				var out []findings.Issue
				if err := w.st.Lists.EachScanIssue(ctx, w.company, sc.ID, func(i findings.Issue) error { out = append(out, i); return nil }); err != nil {
					t.Fatal(err)
				}
				return out
			}
			written := stored()
			if len(written) == 0 || (tc.partial && len(written) == len(fs)) {
				t.Fatalf("the crash left %d of %d issues", len(written), len(fs))
			}
			// People triage what they see meanwhile.
			fp, reason := "false_positive", "test fixture"
			if _, err := w.st.Triage.UpdateIssue(ctx, w.company, written[0].ID, triage.IssueUpdate{Status: &fp, Reason: &reason}, findings.Actor{UserID: 5}); err != nil {
				t.Fatal(err)
			}
			changed, err := failScan(ctx, w.st, w.company, sc.ID, "The upload could not be processed")
			if err != nil || !changed {
				t.Fatalf("give up: %v %v", changed, err)
			}
			testenv.Recount(t, w.st, w.company)
			if got, err := w.st.Scans.GetScan(ctx, w.company, sc.ID); err != nil || got.Status != scans.ScanIncomplete {
				t.Fatalf("the scan given up: %+v %v", got, err)
			}
			// A batch the crash cut off may still have landed after the
			// first read (the server finishes what it received).
			written = stored()
			// A later scan of the branch reports everything again: the
			// issues the given-up scan never wrote are created now, once.
			_, res := w.scan(t, "main", "t", fs...)
			if res.Created != len(fs)-len(written) {
				t.Fatalf("the later scan created %d, want %d", res.Created, len(fs)-len(written))
			}
			testenv.Recount(t, w.st, w.company)
		})
	}
}

// A scan that crashed midway and was overtaken by the next scan of its
// branch: the next scan settles its journal before anything else, and the
// failure that comes later finds nothing owed.
func TestNextScanSettlesAJournalLeftBehind(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	fs := manyFindings("g", 300, 79, 89, 22)
	sc := w.processing(t, "main")
	crashOn(w.st, 2, issueBatch)
	if _, err := w.st.Findings.ApplyScan(ctx, w.company, sc, w.found(sc, fs...)); err == nil {
		t.Fatal("the crash was not injected")
	}
	// The next scan reports a third of them; the crashed scan's other
	// issues it wrote are fixed by it, the ones it never wrote never exist.
	_, res := w.scan(t, "main", "t", fs[:100]...)
	if res.Created+res.Unchanged != 100 {
		t.Fatalf("the next scan: %+v", res)
	}
	testenv.Recount(t, w.st, w.company)
	if changed, err := failScan(ctx, w.st, w.company, sc.ID, "The upload could not be processed"); err != nil || !changed {
		t.Fatalf("give up: %v %v", changed, err)
	}
	testenv.Recount(t, w.st, w.company)
}

// markerFixed matches the update that marks a journal's fix written.
func markerFixed(p any) bool {
	in, ok := p.(*dynamodb.TransactWriteItemsInput)
	if !ok || len(in.TransactItems) == 0 || in.TransactItems[0].Update == nil {
		return false
	}
	sk, ok := in.TransactItems[0].Update.Key["SK"].(*types.AttributeValueMemberS)
	return ok && sk.Value == "~DONE"
}

// Settling a journal may crash too: before its fix is marked written (the
// next attempt writes the same fix over it), and while paying (the next
// attempt pays what is left). The counters end exact all the same.
func TestSettlingAJournalSurvivesCrashes(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	fs := manyFindings("h", 400, 79, 89, 22, 78)
	sc := w.processing(t, "main")
	crashOn(w.st, 3, issueBatch)
	if _, err := w.st.Findings.ApplyScan(ctx, w.company, sc, w.found(sc, fs...)); err == nil {
		t.Fatal("the crash was not injected")
	}
	fixed := crashOn(w.st, 1, markerFixed)
	paid := crashOn(w.st, 3, journalPayment)
	for attempt := 0; attempt < 2; attempt++ {
		if _, err := failScan(ctx, w.st, w.company, sc.ID, "The upload could not be processed"); err == nil || !strings.Contains(err.Error(), "crashed") {
			t.Fatalf("settling attempt %d answered %v", attempt, err)
		}
	}
	if fixed.Load() != 2 || paid.Load() < 3 {
		t.Fatalf("crashes: the fix marked %d times, %d payments", fixed.Load(), paid.Load())
	}
	if changed, err := failScan(ctx, w.st, w.company, sc.ID, "The upload could not be processed"); err != nil || !changed {
		t.Fatalf("give up: %v %v", changed, err)
	}
	testenv.Recount(t, w.st, w.company)
	_, res := w.scan(t, "main", "t", fs...)
	if res.Created == 0 || res.Created == len(fs) {
		t.Fatalf("the later scan: %+v", res)
	}
	testenv.Recount(t, w.st, w.company)
}

// A scan given up after its quality and SCA writers died between their
// findings and their counters: failing it pays what they owe.
func TestScanGivenUpPaysItsCountedWrites(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	const company = 32
	p, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: company, Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := st.Scans.CreateScan(ctx, scans.Scan{CompanyID: company, ProjectID: p.ID, Branch: "main", Engine: "lint",
		RunID: uuid.NewString(), Status: scans.ScanProcessing, CreatedAt: "2025-03-01T10:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	qs, sca := findingsOf(sc, 70, "Complexity", "Style")
	for _, write := range []func() error{
		func() error { return st.Quality.PutQualityIssues(ctx, company, qs) },
		func() error { return st.SCA.PutScanSCAIssues(ctx, company, sc, sca) },
	} {
		restore, crashed := crashApply(st)
		err := write()
		restore()
		if err == nil || !crashed.Load() {
			t.Fatalf("crash not injected: %v", err)
		}
	}
	if err := recount.Check(ctx, recount.StoreOf(st), company); err == nil {
		t.Fatal("a recount must see the counters short while the journals are not paid")
	}
	if changed, err := failScan(ctx, st, company, sc.ID, "The upload could not be processed"); err != nil || !changed {
		t.Fatalf("give up: %v %v", changed, err)
	}
	if q, s, ss, _ := totals(t, st, sc); q != len(qs) || s != len(sca) || ss != len(sca) {
		t.Fatalf("totals after the give-up: quality %d, SCA %d, scan SCA %d; want %d each", q, s, ss, len(qs))
	}
	testenv.Recount(t, st, company)
}

// failScan fails a scan as the ingester and the stalled sweep do
// (scanlife.Fail).
func failScan(ctx context.Context, st *store.Store, company int64, scanID, reason string) (bool, error) {
	sc, err := st.Scans.GetScan(ctx, company, scanID)
	if err != nil {
		return false, err
	}
	return scanlife.Fail(ctx, scanlife.FailingOf(st), sc, reason, nil, time.Now())
}
