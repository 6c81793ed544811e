package scanjournal_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/lease"
	"github.com/acme/codescan-api/shared/store/internal/scanjournal"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/trends"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const company = 5

// issues is the issues' area as the journal sees it: every new issue
// moves one counter per file by one, a counter is an item whose "n" is
// its count, and the issues that exist are those in written.
type issues struct {
	t       *ddb.Table
	written map[string]string // id → the scan that wrote it
	settled []ddb.Key         // what SettleCounters was asked to settle
}

func (p *issues) Moves(_ context.Context, _ int64, created []scanjournal.Created, _ string) (scanjournal.Moves, error) {
	by := map[string]*scanjournal.Entry{}
	var mv scanjournal.Moves
	for _, c := range created {
		e := by[c.File]
		if e == nil {
			e = &scanjournal.Entry{Project: c.ProjectID, Branch: c.Branch, Dim: schema.ByFile, Group: c.File, Cells: map[string]int64{}}
			by[c.File] = e
		}
		e.Cells[c.Urgency+"/"+c.Status]++
	}
	for _, e := range by {
		mv.Counters = append(mv.Counters, *e)
	}
	return mv, nil
}

func (p *issues) Written(_ context.Context, _ int64, scanID string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, id := range ids {
		if s, ok := p.written[id]; ok {
			out[id] = s == scanID
		}
	}
	return out, nil
}

func (p *issues) CounterKeys(companyID int64, created []scanjournal.Created) []ddb.Key {
	var keys []ddb.Key
	for _, c := range created {
		k := schema.CounterKey(companyID, schema.Scope{ProjectID: c.ProjectID, Branch: c.Branch}, schema.ByFile, c.File)
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

func (p *issues) TxPaySettled(_ context.Context, _ int64, entries []scanjournal.Entry, keys []ddb.Key) ([]types.TransactWriteItem, error) {
	return p.TxPayPlain(entries, keys)
}

func (p *issues) TxPayPlain(entries []scanjournal.Entry, keys []ddb.Key) ([]types.TransactWriteItem, error) {
	var items []types.TransactWriteItem
	for n, e := range entries {
		var sum int64
		for _, v := range e.Cells {
			sum += v
		}
		add, err := p.t.TxUpdate(keys[n], expression.Add(expression.Name("n"), expression.Value(sum)), nil)
		if err != nil {
			return nil, err
		}
		items = append(items, add)
	}
	return items, nil
}

func (p *issues) SettleCounters(_ context.Context, _ int64, keys []ddb.Key) error {
	p.settled = append(p.settled, keys...)
	return nil
}

type noTrends struct{}

func (noTrends) TxMoves(int64, []trends.Move) ([]types.TransactWriteItem, error) { return nil, nil }

// branch is one branch's head and the journal's world around it.
type branch struct {
	t      *ddb.Table
	issues *issues
	j      *scanjournal.Journal
	sc     scans.Scan
	head   ddb.Key
	now    time.Time
}

func newBranch(t *testing.T) *branch {
	tb := ddb.New(testenv.Table(t))
	b := &branch{t: tb, issues: &issues{t: tb, written: map[string]string{}}, now: time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC),
		sc: scans.Scan{ID: uuid.NewString(), ProjectID: 3, Branch: "main"}}
	tb.Now = func() time.Time { return b.now }
	b.j = scanjournal.New(tb, b.issues, noTrends{})
	b.head = schema.HeadKey(company, 3, "main", "t")
	return b
}

// take takes the branch's lease, under a fence of its own.
func (b *branch) take(t *testing.T) lease.Fence {
	t.Helper()
	var h struct {
		ddb.Key
		Journal string `dynamodbav:"journal"`
	}
	f, err := lease.TakeFenced(context.Background(), b.t, b.head, uuid.NewString(), &h)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// created are n new issues of the scan over two files.
func (b *branch) created(n int) []scanjournal.Created {
	out := make([]scanjournal.Created, n)
	for i := range out {
		out[i] = scanjournal.Created{ID: uuid.NewString(), ProjectID: b.sc.ProjectID, Branch: b.sc.Branch, CWE: 79,
			File: fmt.Sprintf("f%d.go", i%2), Urgency: "HI", Status: "open"}
	}
	return out
}

// counts are the counters of the two files.
func (b *branch) counts(t *testing.T) [2]int64 {
	t.Helper()
	var out [2]int64
	for n := range out {
		var c struct {
			N int64 `dynamodbav:"n"`
		}
		k := schema.CounterKey(company, schema.Scope{ProjectID: b.sc.ProjectID, Branch: b.sc.Branch}, schema.ByFile, fmt.Sprintf("f%d.go", n))
		if err := b.t.GetItemConsistent(context.Background(), k, &c); err != nil && !errors.Is(err, ddb.ErrNotFound) {
			t.Fatal(err)
		}
		out[n] = c.N
	}
	return out
}

// A retried attempt of the same apply finds the journal the first one
// wrote and pays it: the counters move once, and once closed, nothing is
// owed.
func TestAJournalIsPaidOnceAcrossAttempts(t *testing.T) {
	t.Parallel()
	b := newBranch(t)
	ctx := lease.WithFence(context.Background(), b.take(t))
	creates := b.created(5)
	if _, err := b.j.Open(ctx, company, b.sc, mustFence(ctx), creates); err != nil {
		t.Fatal(err)
	}
	again, err := b.j.Open(ctx, company, b.sc, mustFence(ctx), creates[:1]) // what the retry finds still to create
	if err != nil || again == nil {
		t.Fatalf("the retry's journal: %v %v", again, err)
	}
	settled := map[ddb.Key]bool{}
	if err := b.j.Pay(ctx, again, settled); err != nil {
		t.Fatal(err)
	}
	if got := b.counts(t); got != [2]int64{3, 2} || len(settled) != 2 {
		t.Fatalf("counters %v (settled %v), want the first attempt's 3 and 2", got, settled)
	}
	if err := b.j.Close(ctx, again); err != nil {
		t.Fatal(err)
	}
	if o, err := b.j.Open(ctx, company, b.sc, mustFence(ctx), nil); o != nil || err != nil {
		t.Fatalf("a closed journal owes %v %v", o, err)
	}
}

// A journal whose writer gave up after paying is settled by the next
// holder of the branch: what it paid for issues never written as the
// scan's is taken back, every counter of its brief is settled, and it is
// owed no more.
func TestSettlingTakesBackWhatWasNeverWritten(t *testing.T) {
	t.Parallel()
	b := newBranch(t)
	ctx := lease.WithFence(context.Background(), b.take(t))
	creates := b.created(4)
	o, err := b.j.Open(ctx, company, b.sc, mustFence(ctx), creates)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.j.Pay(ctx, o, map[ddb.Key]bool{}); err != nil {
		t.Fatal(err)
	}
	b.issues.written[creates[0].ID] = b.sc.ID   // f0.go: written
	b.issues.written[creates[1].ID] = "another" // f1.go: another scan's issue of that id
	b.now = b.now.Add(lease.For + time.Second)  // the writer's lease ran out
	next := lease.WithFence(context.Background(), b.take(t))
	if err := b.j.Settle(next, company, b.sc.ID); err != nil {
		t.Fatal(err)
	}
	if got := b.counts(t); got != [2]int64{1, 0} {
		t.Fatalf("counters %v, want only the written issue counted", got)
	}
	if len(b.issues.settled) != 0 {
		t.Fatalf("counters paid settled were settled again: %v", b.issues.settled)
	}
	if err := b.j.Settle(next, company, b.sc.ID); err != nil || b.counts(t) != [2]int64{1, 0} {
		t.Fatalf("settling a settled journal: %v %v", b.counts(t), err)
	}
}

// A writer frozen past its lease cannot pay its journal after the next
// holder took the branch: the payment is refused and moves nothing.
func TestALateWriterCannotPay(t *testing.T) {
	t.Parallel()
	b := newBranch(t)
	ctx := lease.WithFence(context.Background(), b.take(t))
	o, err := b.j.Open(ctx, company, b.sc, mustFence(ctx), b.created(2))
	if err != nil {
		t.Fatal(err)
	}
	b.now = b.now.Add(lease.For + time.Second)
	b.take(t)
	if err := b.j.Pay(ctx, o, map[ddb.Key]bool{}); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("a late payment: %v", err)
	}
	if got := b.counts(t); got != [2]int64{} {
		t.Fatalf("counters %v after a refused payment", got)
	}
}

func mustFence(ctx context.Context) lease.Fence {
	f, _ := lease.FenceOf(ctx)
	return f
}
