package findings_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/internal/lease"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/store/triage"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// world is one project's branch, scanned by writers that share a table,
// each through a handle of its own with a clock of its own.
type world struct {
	client  *dynamodb.Client
	name    string
	company int64
	project int64
	t0      time.Time
}

func newWorld(t testing.TB) *world {
	client, name := testenv.Table(t)
	w := &world{client: client, name: name, company: 21, t0: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	wr := w.writer(w.t0)
	p, err := wr.catalog.CreateProject(context.Background(), schema.Project{CompanyID: w.company, Name: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	w.project = p.ID
	return w
}

// writer is one process writing scans: the areas over its table handle.
type writer struct {
	tb      *ddb.Table
	f       *findings.Findings
	scans   *scans.Scans
	catalog *catalog.Catalog
}

// writer is a process whose clock stands at now, its client changed by
// opts.
func (w *world) writer(now time.Time, opts ...func(*dynamodb.Options)) *writer {
	tb := ddb.New(dynamodb.New(w.client.Options(), opts...), w.name)
	tb.Now = func() time.Time { return now }
	l := &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention}
	wr := &writer{tb: tb, catalog: catalog.New(tb, l)}
	wr.scans = scans.New(tb, l, scans.Deps{Catalog: wr.catalog})
	tr := triage.New(tb, l)
	wr.f = findings.New(tb, l, findings.Deps{Completion: wr.scans, Trends: trends.New(tb),
		Decisions: tr, Rules: tr})
	return wr
}

// fps are the fingerprints f<from>..f<to-1>.
func fps(from, to int) []string {
	var out []string
	for n := from; n < to; n++ {
		out = append(out, fmt.Sprintf("f%03d", n))
	}
	return out
}

// scan creates a processing scan of the branch made at at; the findings
// it reports for fingerprints.
func (w *world) scan(t testing.TB, wr *writer, at time.Time, fingerprints []string) (scans.Scan, []findings.Issue) {
	t.Helper()
	sc, err := wr.scans.CreateScan(context.Background(), scans.Scan{ID: uuid.NewString(), CompanyID: w.company, ProjectID: w.project,
		Branch: "main", Engine: "sarif", Tool: "t", Status: scans.ScanProcessing, CreatedAt: at.Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	var found []findings.Issue
	for n, fp := range fingerprints {
		found = append(found, findings.Issue{ID: w.id(fp), ProjectID: w.project, ProjectName: "svc", Branch: "main", Tool: "t",
			Fingerprint: fp, CWE: []int{79, 89, 22}[n%3], FilePath: fmt.Sprintf("src/%s.go", fp[:3]), Line: 3,
			Urgency: []string{"HI", "CR"}[n%2], RuleID: "r-" + fp, Title: fp, CreatedAt: sc.CreatedAt})
	}
	return sc, found
}

func (w *world) id(fp string) string { return findings.IssueID(w.company, w.project, "main", "t", fp) }

// freeze stalls the first DynamoDB call match accepts until released (a
// writer paused, or its network stalled, with the request under way),
// then sends it as it was, even though its sender gave up meanwhile (a
// request on the wire reaches the server all the same), and keeps the
// answer.
type freeze struct {
	match           func(params any) bool
	once            sync.Once
	frozen, release chan struct{}
	answer          error
}

func newFreeze(match func(any) bool) *freeze {
	return &freeze{match: match, frozen: make(chan struct{}), release: make(chan struct{})}
}

func (fz *freeze) option(o *dynamodb.Options) {
	o.APIOptions = append(slices.Clone(o.APIOptions), func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("freeze",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				hit := false
				if fz.match(in.Parameters) {
					fz.once.Do(func() { hit = true })
				}
				if !hit {
					return next.HandleInitialize(ctx, in)
				}
				close(fz.frozen)
				<-fz.release
				out, md, err := next.HandleInitialize(context.WithoutCancel(ctx), in)
				fz.answer = err
				return out, md, err
			}), middleware.Before)
	})
}

// issuePut matches a transaction that puts an issue: a creation (no
// condition) or an update (conditional on the version read).
func issuePut(update bool) func(any) bool {
	return func(p any) bool {
		in, ok := p.(*dynamodb.TransactWriteItemsInput)
		if !ok {
			return false
		}
		for _, it := range in.TransactItems {
			if it.Put == nil {
				continue
			}
			sk, _ := it.Put.Item["SK"].(*types.AttributeValueMemberS)
			if sk != nil && strings.HasPrefix(sk.Value, "ISSUE#") && (it.Put.ConditionExpression != nil) == update {
				return true
			}
		}
		return false
	}
}

// A writer frozen past its lease while it writes a scan (its transaction
// under way) comes back after the next writer took the branch, settled
// what the first one left and applied a newer scan completely: every
// write it makes then is refused, its apply ends with the lease lost, and
// the branch is as the newer scan left it, its counters equal to its
// issues.
func TestFrozenWriterIsFencedOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		match   func(any) bool
		created bool // the frozen writer's new issues were written before it froze
	}{
		{"creating issues", issuePut(false), false},
		{"fixing and updating issues", issuePut(true), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			ctx := context.Background()
			base := w.writer(w.t0)
			s0, found := w.scan(t, base, w.t0, fps(0, 100))
			if _, err := base.f.ApplyScan(ctx, w.company, s0, found); err != nil {
				t.Fatal(err)
			}
			// A applies a scan that creates 50 issues and fixes 50, and
			// freezes; B's clock is past A's lease.
			fz := newFreeze(tc.match)
			a := w.writer(w.t0.Add(time.Minute), fz.option)
			sa, foundA := w.scan(t, a, w.t0.Add(time.Minute), fps(50, 150))
			var errA error
			doneA := make(chan struct{})
			go func() {
				defer close(doneA)
				_, errA = a.f.ApplyScan(ctx, w.company, sa, foundA)
			}()
			select {
			case <-fz.frozen:
			case <-doneA:
				t.Fatalf("A finished without freezing: %v", errA)
			}
			b := w.writer(w.t0.Add(time.Minute + 2*lease.For))
			sb, foundB := w.scan(t, b, w.t0.Add(2*time.Minute), append(fps(0, 30), fps(150, 200)...))
			if _, err := b.f.ApplyScan(ctx, w.company, sb, foundB); err != nil {
				t.Fatalf("B: %v", err)
			}
			close(fz.release)
			<-doneA
			w.checkCounters(t, b)
			w.checkBranch(t, b, sb, tc.created)
			if !errors.Is(errA, findings.ErrLeaseLost) || !ddb.IsConditionFailed(fz.answer) {
				t.Fatalf("A came back: %v; its write under way answered %v", errA, fz.answer)
			}
		})
	}
}

// checkBranch checks that the branch is as scan sb left it: its head, the
// 30 issues it reported again open, the 70 of the first scan it did not
// report fixed by it, its 50 new ones open; the 50 issues of the frozen
// writer's scan exist only when it created them before it froze, and
// none of its changes stayed.
func (w *world) checkBranch(t *testing.T, b *writer, sb scans.Scan, created bool) {
	t.Helper()
	ctx := context.Background()
	var head findings.ScanHead
	if err := b.tb.GetItemConsistent(ctx, schema.HeadKey(w.company, w.project, "main", "t"), &head); err != nil ||
		head.ScanID != sb.ID || head.LeaseOwner != "" || head.Journal != "" {
		t.Fatalf("head %+v %v, want scan %s, no lease, no journal", head, err, sb.ID)
	}
	ids := make([]string, 0, 200)
	for _, fp := range fps(0, 200) {
		ids = append(ids, w.id(fp))
	}
	got, err := findings.ByID(ctx, b.f, w.company, ids)
	if err != nil {
		t.Fatal(err)
	}
	for n, fp := range fps(0, 200) {
		i, ok := got[w.id(fp)]
		want := "open"
		switch {
		case n >= 30 && n < 100:
			want = "fixed"
		case n >= 100 && n < 150 && !created:
			want = "" // never written
		}
		status := ""
		if ok {
			status = i.Status
		}
		if status != want || (want == "fixed" && i.FixedScanID != sb.ID) {
			t.Fatalf("issue %s: %q (fixed by %q), want %q", fp, status, i.FixedScanID, want)
		}
		if ok {
			if err := i.CheckDueKeys(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkCounters checks that the company's group counters count exactly
// its issues (of fingerprints f000..f199), each settled (indexed for its
// count).
func (w *world) checkCounters(t *testing.T, b *writer) {
	t.Helper()
	ids := make([]string, 0, 200)
	for _, fp := range fps(0, 200) {
		ids = append(ids, w.id(fp))
	}
	checkCounters(t, b.tb, b.f, w.company, ids)
}

// checkCounters checks that the company's group counters count exactly
// the issues ids (all it has), each settled.
func checkCounters(t *testing.T, tb *ddb.Table, f *findings.Findings, company int64, ids []string) {
	t.Helper()
	ctx := context.Background()
	issues, err := findings.ByID(ctx, f, company, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]findings.Cells{}
	for _, i := range issues {
		i.EachCounter(func(sc schema.Scope, dim schema.Dimension, group string) {
			k := schema.CounterKey(company, sc, dim, group).SK
			if want[k] == nil {
				want[k] = findings.Cells{}
			}
			want[k][schema.CellKey(i.Urgency, i.Status)]++
		})
	}
	kc := ddb.PKBeginsWith(schema.CompanyPK(company), "GRP#")
	var counts []findings.GroupCount
	var keys []struct {
		ddb.Key
		Count   int64 `dynamodbav:"issue_count"`
		Indexed int64 `dynamodbav:"indexed_count"`
	}
	if err := tb.QueryAllConsistent(ctx, kc, &counts); err != nil {
		t.Fatal(err)
	}
	if err := tb.QueryAllConsistent(ctx, kc, &keys); err != nil || len(keys) != len(counts) {
		t.Fatalf("%d counters, then %d: %v", len(counts), len(keys), err)
	}
	got := map[string]findings.Cells{}
	for n, c := range counts {
		if c.Count != 0 || len(c.Cells) > 0 {
			got[keys[n].SK] = c.Cells
		}
		if keys[n].Indexed != keys[n].Count {
			t.Errorf("counter %s: count %d indexed as %d", keys[n].SK, keys[n].Count, keys[n].Indexed)
		}
	}
	if !maps.EqualFunc(got, want, maps.Equal) {
		for k := range want {
			if !maps.Equal(got[k], want[k]) {
				t.Errorf("counter %s: %v, its issues %v", k, got[k], want[k])
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("counter %s: %v, no issues", k, got[k])
			}
		}
		t.FailNow()
	}
}
