package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/store/triage"
)

// branchWorld applies scans of one project to a store.
type branchWorld struct {
	st      *store.Store
	company int64
	project int64
	clock   time.Time
}

func newBranchWorld(t *testing.T) *branchWorld {
	return &branchWorld{st: testenv.NewStore(t), company: 11, project: 3, clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// finding is one result a scan reports: a fingerprint and its CWE.
type finding struct {
	fp  string
	cwe int
}

// scan creates a scan of branch and tool, created one minute after the
// previous one, and applies its findings.
func (w *branchWorld) scan(t *testing.T, branch, tool string, fs ...finding) (scans.Scan, findings.ApplyResult) {
	t.Helper()
	w.clock = w.clock.Add(time.Minute)
	sc, res, err := w.apply(branch, tool, w.clock, fs...)
	if err != nil {
		t.Fatal(err)
	}
	return sc, res
}

func (w *branchWorld) apply(branch, tool string, at time.Time, fs ...finding) (scans.Scan, findings.ApplyResult, error) {
	ctx := context.Background()
	sc, err := w.st.Scans.CreateScan(ctx, scans.Scan{
		ID: uuid.NewString(), CompanyID: w.company, ProjectID: w.project, Branch: branch, Engine: "sarif",
		Tool: tool, Status: scans.ScanProcessing, CreatedAt: at.Format(time.RFC3339),
	})
	if err != nil {
		return sc, findings.ApplyResult{}, err
	}
	res, err := w.st.Findings.ApplyScan(ctx, w.company, sc, w.found(sc, fs...))
	return sc, res, err
}

// found are the issues a scan of the world reports for fs.
func (w *branchWorld) found(sc scans.Scan, fs ...finding) []findings.Issue {
	var out []findings.Issue
	for _, f := range fs {
		out = append(out, findings.Issue{
			ID:        findings.IssueID(w.company, w.project, sc.Branch, sc.Tool, f.fp),
			ProjectID: w.project, ProjectName: "svc", Branch: sc.Branch, Tool: sc.Tool, Fingerprint: f.fp,
			CWE: f.cwe, FilePath: "src/" + f.fp + ".go", Line: 3, Urgency: "HI", RuleID: "r-" + f.fp,
			CreatedAt: sc.CreatedAt,
		})
	}
	return out
}

func (w *branchWorld) issue(t *testing.T, branch, tool, fp string) findings.Issue {
	t.Helper()
	i, err := w.st.Lists.GetIssue(context.Background(), w.company, findings.IssueID(w.company, w.project, branch, tool, fp))
	if err != nil {
		t.Fatalf("issue %s on %s: %v", fp, branch, err)
	}
	return i
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	a, b, c := finding{"a", 89}, finding{"b", 89}, finding{"c", 79}

	first, res := w.scan(t, "main", "gosec", a, b, c)
	if res.Created != 3 {
		t.Fatalf("first scan: %+v", res)
	}
	cFirst := w.issue(t, "main", "gosec", "c")
	testenv.Recount(t, w.st, w.company)

	// The same report again: nothing changes, not even a counter.
	_, res = w.scan(t, "main", "gosec", a, b, c)
	if res != (findings.ApplyResult{Unchanged: 3}) {
		t.Fatalf("same report again: %+v", res)
	}
	if got := w.issue(t, "main", "gosec", "c"); got != cFirst {
		t.Fatalf("re-detection rewrote the issue:\n%+v\n%+v", cFirst, got)
	}
	list, err := w.st.Lists.ListGroups(ctx, w.company, schema.Scope{ProjectID: w.project, Branch: "main"}, schema.ByCWE, page.Request{Limit: 10})
	groups := list.Items
	if err != nil || len(groups) != 2 || groups[0].Group != "89" || groups[0].Count != 2 || groups[1].Count != 1 {
		t.Fatalf("groups after two uploads: %+v %v", groups, err)
	}

	// Triage survives re-detection.
	fp := "false_positive"
	reason := "test fixture"
	if _, err := w.st.Triage.UpdateIssue(ctx, w.company, w.issue(t, "main", "gosec", "b").ID, triage.IssueUpdate{Status: &fp, Reason: &reason}, findings.Actor{UserID: 42}); err != nil {
		t.Fatal(err)
	}

	// c is left out: fixed, by this scan. b, dismissed and reported, stays.
	fixing, res := w.scan(t, "main", "gosec", a, b)
	if res.Fixed != 1 || res.Unchanged != 2 {
		t.Fatalf("scan without c: %+v", res)
	}
	cFixed := w.issue(t, "main", "gosec", "c")
	if cFixed.Status != "fixed" || cFixed.FixedScanID != fixing.ID || cFixed.FixedAt != fixing.CreatedAt {
		t.Fatalf("c after the scan without it: %+v", cFixed)
	}
	if got := w.issue(t, "main", "gosec", "b"); got.Status != "false_positive" || got.Reason != reason {
		t.Fatalf("b lost its triage: %+v", got)
	}
	testenv.Recount(t, w.st, w.company)

	// Another branch and another tool never touch main's gosec issues.
	w.scan(t, "dev", "gosec", a)
	w.scan(t, "main", "semgrep")
	if got := w.issue(t, "main", "gosec", "a"); got.Status != "open" {
		t.Fatalf("a on main after other branch/tool scans: %+v", got)
	}

	// c comes back: open again, same id, first detection kept, counted.
	back, res := w.scan(t, "main", "gosec", a, b, c)
	if res.Reopened != 1 || res.Unchanged != 2 {
		t.Fatalf("scan with c back: %+v", res)
	}
	cBack := w.issue(t, "main", "gosec", "c")
	if cBack.ID != cFirst.ID || cBack.Status != "open" || cBack.ReopenCount != 1 || cBack.CreatedAt != cFirst.CreatedAt ||
		cBack.ScanID != first.ID || cBack.LastSeenScanID != back.ID || cBack.FixedAt != "" {
		t.Fatalf("c reopened: %+v", cBack)
	}
	hist, err := w.st.Lists.IssueHistory(ctx, w.company, cBack.ID)
	if err != nil || len(hist) != 2 ||
		hist[0].From != "open" || hist[0].To != "fixed" || hist[0].By.ScanID != fixing.ID ||
		hist[1].From != "fixed" || hist[1].To != "open" || hist[1].By.ScanID != back.ID {
		t.Fatalf("history of c: %+v %v", hist, err)
	}
	hist, err = w.st.Lists.IssueHistory(ctx, w.company, w.issue(t, "main", "gosec", "b").ID)
	if err != nil || len(hist) != 1 || hist[0].By.UserID != 42 || hist[0].To != "false_positive" || hist[0].Reason != reason {
		t.Fatalf("history of b: %+v %v", hist, err)
	}
	if _, err := w.st.Lists.IssueHistory(ctx, w.company+1, cBack.ID); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("another company's issue history: %v", err)
	}

	// A scan older than the branch's latest (uploaded late) adds its new
	// findings but fixes nothing.
	_, res, err = w.apply("main", "gosec", w.clock.Add(-time.Hour), finding{"d", 22})
	if err != nil || !res.Late || res.Created != 1 || res.Fixed != 0 {
		t.Fatalf("late scan: %+v %v", res, err)
	}
	if got := w.issue(t, "main", "gosec", "a"); got.Status != "open" {
		t.Fatalf("a after a late scan: %+v", got)
	}

	// The scan's own list is what it reported.
	var listed []string
	if err := w.st.Lists.EachScanIssue(ctx, w.company, back.ID, func(i findings.Issue) error { listed = append(listed, i.Fingerprint); return nil }); err != nil || len(listed) != 3 {
		t.Fatalf("scan issues: %v %v", listed, err)
	}
	if err := w.st.Lists.EachScanIssue(ctx, w.company+1, back.ID, func(findings.Issue) error { return nil }); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("another company's scan: %v", err)
	}
	testenv.Recount(t, w.st, w.company)
}

// Applying a scan again (a retried upload, a redelivered message) changes
// nothing more.
func TestApplyScanIsIdempotent(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	w.scan(t, "main", "t", finding{"a", 1}, finding{"b", 2})
	sc, _ := w.scan(t, "main", "t", finding{"a", 1})
	found := []findings.Issue{{ID: findings.IssueID(w.company, w.project, "main", "t", "a"), ProjectID: w.project, ProjectName: "svc",
		Branch: "main", Tool: "t", Fingerprint: "a", CWE: 1, FilePath: "src/a.go", Line: 3, Urgency: "HI", RuleID: "r-a", CreatedAt: sc.CreatedAt}}
	res, err := w.st.Findings.ApplyScan(ctx, w.company, sc, found)
	if err != nil || res != (findings.ApplyResult{Unchanged: 1}) {
		t.Fatalf("applied again: %+v %v", res, err)
	}
	if got := w.issue(t, "main", "t", "b"); got.Status != "fixed" {
		t.Fatalf("b: %+v", got)
	}
	got, err := w.st.Scans.GetScan(ctx, w.company, sc.ID)
	if err != nil || got.Status != scans.ScanComplete || got.Findings != 1 {
		t.Fatalf("scan: %+v %v", got, err)
	}
	testenv.Recount(t, w.st, w.company)
}

// Sixteen uploads of one branch at once end as if applied one after the
// other: every counter equals a recount, and the branch's issues are
// exactly those the last applied scan reported plus the fixed ones.
func TestConcurrentScansOfOneBranch(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	all := make([]finding, 12)
	for n := range all {
		all[n] = finding{fmt.Sprintf("f%02d", n), []int{79, 89, 22}[n%3]}
	}
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for k := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var some []finding
			for _, f := range all {
				if rand.IntN(2) == 0 {
					some = append(some, f)
				}
			}
			_, _, errs[k] = w.apply("main", "t", w.clock.Add(time.Duration(k)*time.Second), some...)
		}()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil && !errors.Is(err, ddb.ErrUnavailable) {
			t.Fatalf("scan %d: %v", k, err)
		}
	}
	testenv.Recount(t, w.st, w.company)
}

func TestTriageIssues(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	var fs []finding
	for n := range 30 {
		fs = append(fs, finding{fmt.Sprintf("x%02d", n), []int{89, 79}[n%2]})
	}
	w.scan(t, "main", "t", fs...)
	cwe := 89
	f := issuelists.IssueFilter{CWE: &cwe}
	matched, changed, err := w.st.Triage.TriageIssues(ctx, w.company, f, "accepted_risk", "legacy code", schema.Terms{}, findings.Actor{UserID: 5})
	if err != nil || matched != 15 || changed != 15 {
		t.Fatalf("bulk triage: %d %d %v", matched, changed, err)
	}
	counts, err := w.st.Lists.GroupCounts(ctx, w.company, []schema.Scope{{}}, schema.ByCWE, "89")
	if err != nil || counts[0].Cells.Total("", "accepted_risk") != 15 || counts[0].Cells.Total("", "open") != 0 {
		t.Fatalf("group 89 after triage: %+v %v", counts, err)
	}
	matched, changed, err = w.st.Triage.TriageIssues(ctx, w.company, f, "accepted_risk", "legacy code", schema.Terms{}, findings.Actor{UserID: 5})
	if err != nil || matched != 15 || changed != 0 {
		t.Fatalf("bulk triage again: %d %d %v", matched, changed, err)
	}
	if _, _, err := w.st.Triage.TriageIssues(ctx, w.company, f, "closed", "", schema.Terms{}, findings.Actor{}); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("unknown status: %v", err)
	}
	testenv.Recount(t, w.st, w.company)
}

// The write paths record their events in the outbox: a scan its completion
// and its new high-urgency issues, a status change (by the lifecycle or by
// triage) its issue_status_changed; triage also writes the audit log.
func TestLifecycleEvents(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{UserID: 5, Via: ledger.ViaBearer})
	first, _ := w.scan(t, "main", "t", finding{"a", 89}, finding{"b", 79})
	event := func(id string) map[string]any {
		t.Helper()
		data, ok := testenv.OutboxEvent(t, w.st, w.company, id)
		if !ok {
			t.Fatalf("no event %s", id)
		}
		return data
	}
	noEvent := func(id string) {
		t.Helper()
		if data, ok := testenv.OutboxEvent(t, w.st, w.company, id); ok {
			t.Fatalf("event %s: %v", id, data)
		}
	}
	if d := event("scan_completed-" + first.ID); d["findings"] != 2.0 || d["new_issues"] != 2.0 || d["branch"] != "main" || d["tool"] != "t" {
		t.Fatalf("scan_completed: %v", d)
	}
	if d := event("new_high_issue-" + first.ID); d["count"] != 2.0 || len(d["issues"].([]any)) != 2 {
		t.Fatalf("new_high_issue: %v", d)
	}
	noEvent("new_critical_issue-" + first.ID)
	// The second scan finds a again (not new) and not b: b is fixed.
	second, _ := w.scan(t, "main", "t", finding{"a", 89})
	noEvent("new_high_issue-" + second.ID) // a was not new
	if d := event("scan_completed-" + second.ID); d["findings"] != 1.0 || d["new_issues"] != 0.0 {
		t.Fatalf("scan_completed of the second scan: %v", d)
	}
	b := w.issue(t, "main", "t", "b")
	if d := event(fmt.Sprintf("issue_status_changed-%s-v%d", b.ID, b.Version)); d["previous_status"] != "open" || d["status"] != "fixed" || d["changed_by"] != nil {
		t.Fatalf("fixed by the lifecycle: %v", d)
	}
	a := w.issue(t, "main", "t", "a")
	status, reason := "false_positive", "test fixture"
	after, err := w.st.Triage.UpdateIssue(ctx, w.company, a.ID, triage.IssueUpdate{Status: &status, Reason: &reason}, findings.Actor{UserID: 5})
	if err != nil {
		t.Fatal(err)
	}
	if d := event(fmt.Sprintf("issue_status_changed-%s-v%d", a.ID, after.Version)); d["status"] != status || d["changed_by"] != 5.0 {
		t.Fatalf("triaged: %v", d)
	}
	entriesPage, err := w.st.Tenancy.ListAudit(ctx, w.company, tenancy.AuditFilter{Action: "issue.update"}, page.Request{Limit: 10})
	entries := entriesPage.Items
	if err != nil || len(entries) != 1 || entries[0].TargetID != a.ID || entries[0].Actor.UserID != 5 ||
		entries[0].Changes["status"].After != status {
		t.Fatalf("audit of the triage: %+v %v", entries, err)
	}
	cwe := 89
	if _, changed, err := w.st.Triage.TriageIssues(ctx, w.company, issuelists.IssueFilter{CWE: &cwe}, "open", "", schema.Terms{}, findings.Actor{UserID: 5}); err != nil || changed != 1 {
		t.Fatalf("bulk triage: %d %v", changed, err)
	}
	entriesPage, err = w.st.Tenancy.ListAudit(ctx, w.company, tenancy.AuditFilter{Action: "issue.triage"}, page.Request{Limit: 10})
	entries = entriesPage.Items
	if err != nil || len(entries) != 1 || entries[0].Changes["status"].After != "open" {
		t.Fatalf("audit of the bulk triage: %+v %v", entries, err)
	}
}

// issueWrites watches a store's calls: it counts the issue keys read with
// BatchGetItem, and fails the failAt-th BatchWriteItem of issues once (a
// worker that dies with part of its issues written, while the journal is
// being applied beside them).
type issueWrites struct {
	read, batches atomic.Int64
	failAt        int64
}

func (iw *issueWrites) watch(st *store.Store) {
	opts := st.Client().Options()
	opts.APIOptions = append(slices.Clone(opts.APIOptions), func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("issue-writes",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				switch p := in.Parameters.(type) {
				case *dynamodb.BatchGetItemInput:
					for _, ka := range p.RequestItems {
						for _, k := range ka.Keys {
							if sk, ok := k["SK"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(sk.Value, "ISSUE#") {
								iw.read.Add(1)
							}
						}
					}
				case *dynamodb.TransactWriteItemsInput:
					if issueBatch(p) && iw.batches.Add(1) == iw.failAt {
						return middleware.InitializeOutput{}, middleware.Metadata{}, errors.New("crashed")
					}
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
	st.SetClient(dynamodb.New(opts))
}

// The first scan of a branch reads no issue (none can exist before its
// head), and its retry after a crash midway reads them and finishes
// exactly: every finding stored once, every counter equal to a recount.
func TestFirstScanOfABranchRetriedAfterACrash(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	iw := &issueWrites{failAt: 6}
	iw.watch(w.st)
	ctx := context.Background()
	fs := make([]finding, 600) // a file each: some 1,800 counters, 19 journal items
	for n := range fs {
		fs[n] = finding{fmt.Sprintf("f%03d", n), []int{79, 89, 22, 78, 502, 611}[n%6]}
	}
	sc, err := w.st.Scans.CreateScan(ctx, scans.Scan{ID: uuid.NewString(), CompanyID: w.company, ProjectID: w.project, Branch: "feature/x",
		Engine: "sarif", Tool: "t", Status: scans.ScanProcessing, CreatedAt: w.clock.Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.Findings.ApplyScan(ctx, w.company, sc, w.found(sc, fs...)); err == nil || !strings.Contains(err.Error(), "crashed") {
		t.Fatalf("the crashed apply answered %v", err)
	}
	if n := iw.read.Load(); n != 0 {
		t.Fatalf("the first scan of a branch read %d issues", n)
	}
	res, err := w.st.Findings.ApplyScan(ctx, w.company, sc, w.found(sc, fs...))
	if err != nil {
		t.Fatal(err)
	}
	// Once to settle the journal the crashed attempt left (see
	// findings/settle.go), once to apply the scan.
	if n := iw.read.Load(); n != 2*int64(len(fs)) {
		t.Fatalf("the retry read %d issues, want %d", n, 2*len(fs))
	}
	if res.Created+res.Unchanged != len(fs) || res.Created == len(fs) || res.Created == 0 {
		t.Fatalf("the retry: %+v (the crash came after some of the issues were written)", res)
	}
	stored := 0
	if err := w.st.Lists.EachScanIssue(ctx, w.company, sc.ID, func(i findings.Issue) error {
		if i.Status != "open" || i.ScanID != sc.ID {
			return fmt.Errorf("issue %s: %s by %s", i.Fingerprint, i.Status, i.ScanID)
		}
		stored++
		return nil
	}); err != nil || stored != len(fs) {
		t.Fatalf("stored %d of %d: %v", stored, len(fs), err)
	}
	testenv.Recount(t, w.st, w.company)
}
