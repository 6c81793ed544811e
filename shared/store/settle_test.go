package store_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/findings"
)

// before runs fn once, before the first DynamoDB call match accepts.
func before(st *store.Store, match func(params any) bool, fn func(ctx context.Context)) *atomic.Bool {
	done := &atomic.Bool{}
	opts := st.Client().Options()
	opts.APIOptions = append(slices.Clone(opts.APIOptions), func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("before",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if match(in.Parameters) && !done.Swap(true) {
					fn(ctx)
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
	st.SetClient(dynamodb.New(opts))
	return done
}

// fixPayment matches a transaction that pays an item of a fix generation.
func fixPayment(p any) bool {
	in, ok := p.(*dynamodb.TransactWriteItemsInput)
	if !ok {
		return false
	}
	for _, it := range in.TransactItems {
		if it.Delete != nil {
			if sk, ok := it.Delete.Key["SK"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(sk.Value, "C#") && strings.Contains(sk.Value, "-fix#") {
				return true
			}
		}
	}
	return false
}

func openedDays(t *testing.T, w *branchWorld) int64 {
	t.Helper()
	snap, err := w.st.Trends.Snapshot(context.Background(), w.company, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, d := range snap.Days {
		n += d.Opened
	}
	return n
}

// The trend records count no issue the given-up scan never wrote as
// opened, and the next scan that creates it counts it once.
func TestScanGivenUpOpensNoIssueItNeverWrote(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	fs := manyFindings("p", 300, 79, 89, 22)
	sc := w.processing(t, "main")
	crashOn(w.st, 2, issueBatch)
	if _, err := w.st.Findings.ApplyScan(ctx, w.company, sc, w.found(sc, fs...)); err == nil {
		t.Fatal("the crash was not injected")
	}
	if _, err := failScan(ctx, w.st, w.company, sc.ID, "given up"); err != nil {
		t.Fatal(err)
	}
	testenv.Recount(t, w.st, w.company)
	var written int64
	if err := w.st.Lists.EachScanIssue(ctx, w.company, sc.ID, func(findings.Issue) error { written++; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := openedDays(t, w); got != written {
		t.Errorf("after the give-up: %d issues exist, the trend days count %d opened", written, got)
	}
	w.scan(t, "main", "t", fs...)
	if got := openedDays(t, w); got != int64(len(fs)) {
		t.Errorf("after the next scan: %d issues exist (none deleted or reopened), the trend days count %d opened", len(fs), got)
	}
}

// A settlement whose fix payment races another branch's scan (which moves
// the company's counters) must still leave index and summaries exact.
func TestSettlingRacesAnotherBranch(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	fs := manyFindings("q", 300, 79, 89, 22)
	sc := w.processing(t, "main")
	// (the writer pays nothing: it crashes writing issues, which go first)
	crashOn(w.st, 2, issueBatch)
	if _, err := w.st.Findings.ApplyScan(ctx, w.company, sc, w.found(sc, fs...)); err == nil {
		t.Fatal("the crash was not injected")
	}
	var innerErr error
	hit := before(w.st, fixPayment, func(ctx context.Context) {
		_, _, innerErr = w.apply("dev", "t", w.clock.Add(time.Hour), fs[0], fs[1], fs[2])
	})
	if _, err := failScan(ctx, w.st, w.company, sc.ID, "given up"); err != nil {
		t.Fatal(err)
	}
	if !hit.Load() || innerErr != nil {
		t.Fatalf("race not injected: %v %v", hit.Load(), innerErr)
	}
	testenv.Recount(t, w.st, w.company)
}

// chunkPaymentOf matches a transaction paying a counter chunk of scanID's
// journal (not of its fix).
func chunkPaymentOf(scanID string) func(any) bool {
	return func(p any) bool {
		in, ok := p.(*dynamodb.TransactWriteItemsInput)
		if !ok {
			return false
		}
		for _, it := range in.TransactItems {
			if it.Delete == nil {
				continue
			}
			pk, _ := it.Delete.Key["PK"].(*types.AttributeValueMemberS)
			sk, _ := it.Delete.Key["SK"].(*types.AttributeValueMemberS)
			if pk != nil && sk != nil && strings.HasSuffix(pk.Value, "#JRNL#"+scanID) && strings.HasPrefix(sk.Value, "C#") && !strings.Contains(sk.Value, "-fix#") {
				return true
			}
		}
		return false
	}
}

// The writer pays a chunk with plain ADDs (a concurrent scan of another
// branch moved one of its counters), then dies before settling: the scan
// given up must still leave index and summaries exact.
func TestWriterPaidPlainlyThenGaveUp(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	fs := manyFindings("r", 300, 79, 89, 22)
	scan := w.processing(t, "main")
	var innerErr error
	hit := before(w.st, chunkPaymentOf(scan.ID), func(ctx context.Context) {
		_, _, innerErr = w.apply("dev", "t", w.clock.Add(time.Hour), finding{"other1", 79}, finding{"other2", 89}, finding{"other3", 22})
	})
	crashOn(w.st, 3, chunkPaymentOf(scan.ID)) // 1: settled, refused; 2: plain; 3: the next chunk
	if _, err := w.st.Findings.ApplyScan(ctx, w.company, scan, w.found(scan, fs...)); err == nil || !strings.Contains(err.Error(), "crashed") {
		t.Fatalf("apply: %v", err)
	}
	if !hit.Load() || innerErr != nil {
		t.Fatalf("race not injected: %v %v", hit.Load(), innerErr)
	}
	if _, err := failScan(ctx, w.st, w.company, scan.ID, "given up"); err != nil {
		t.Fatal(err)
	}
	testenv.Recount(t, w.st, w.company)
}

// A crashed scan settled by the next scan of its branch, then redelivered
// (late now): it creates what it never wrote, counted once.
func TestRedeliveryAfterAnotherScanSettled(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	fs := manyFindings("s", 300, 79, 89, 22)
	scan := w.processing(t, "main")
	crashOn(w.st, 2, issueBatch)
	if _, err := w.st.Findings.ApplyScan(ctx, w.company, scan, w.found(scan, fs...)); err == nil {
		t.Fatal("the crash was not injected")
	}
	w.scan(t, "main", "t", fs[:50]...)
	testenv.Recount(t, w.st, w.company)
	res, err := w.st.Findings.ApplyScan(ctx, w.company, scan, w.found(scan, fs...))
	if err != nil || !res.Late {
		t.Fatalf("redelivery: %+v %v", res, err)
	}
	testenv.Recount(t, w.st, w.company)
}
