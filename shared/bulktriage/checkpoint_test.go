package bulktriage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/bulktriage"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// The checkpoint tests run small operations, each on a project of its own
// (cpIssues issues, id pages of cpPage) whose issues each count in
// counters of their own file and CWE, so that the first page's changes
// need more than one transaction and are applied a chunk at a time.
const (
	cpIssues = 17
	cpPage   = 14
	cpSCA    = 3
)

// cpCompany is a company of its own; the operations of a test run on its
// projects (cpPart), one after the other, and its counters are recounted
// at the end.
type cpCompany struct {
	st *store.Store
	id int64
}

func newCPCompany(t *testing.T, st *store.Store) *cpCompany {
	t.Helper()
	id, err := st.Ledger.NextID(context.Background(), "company")
	if err != nil {
		t.Fatal(err)
	}
	return &cpCompany{st: st, id: id}
}

// cpPart is a project of the company holding cpIssues semgrep issues
// (every fifth already false_positive) and, for a rule's application,
// cpSCA open SCA findings.
type cpPart struct {
	c       *cpCompany
	project int64
	issues  []string
	sca     []string
}

func (c *cpCompany) part(t *testing.T, name string, withSCA bool, adjust ...func(*findings.Issue)) *cpPart {
	t.Helper()
	ctx := context.Background()
	p, err := c.st.Catalog.CreateProject(ctx, schema.Project{CompanyID: c.id, Name: name, RepoURL: "https://github.com/acme/" + name})
	if err != nil {
		t.Fatal(err)
	}
	part := &cpPart{c: c, project: p.ID}
	seed := make([]findings.Issue, cpIssues)
	changes := make([]findings.IssueChange, cpIssues)
	for k := range seed {
		status := "open"
		if k%5 == 0 {
			status = "false_positive"
		}
		seed[k] = findings.Issue{ID: uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "cp-%d-%d-%d", c.id, p.ID, k)).String(),
			ProjectID: p.ID, ProjectName: p.Name, Branch: []string{"main", "dev"}[k%2], Tool: "semgrep",
			CWE: 100 + k, FilePath: fmt.Sprintf("src/file%d.go", k),
			Urgency: findings.Urgencies[k%4], Status: status, Fingerprint: fmt.Sprintf("fp%d", k), CreatedAt: "2025-04-01T10:00:00Z"}
		for _, f := range adjust {
			f(&seed[k])
		}
		if err := seed[k].Prepare(c.id, "2025-04-01T10:00:00Z"); err != nil {
			t.Fatal(err)
		}
		changes[k] = findings.IssueChange{After: &seed[k]}
		part.issues = append(part.issues, seed[k].ID)
	}
	// Through the issue write path, which adds to the company's counters
	// (the loaders set them, for a company that has no issues yet).
	if _, err := findings.Commit(ctx, c.st.Findings, c.id, changes); err != nil {
		t.Fatal(err)
	}
	if err := findings.Settle(ctx, c.st.Findings, c.id, findings.CounterKeys(c.id, seed)); err != nil {
		t.Fatal(err)
	}
	if withSCA {
		part.sca = part.scaFindings(t)
	}
	return part
}

// scaFindings stores cpSCA open SCA findings of semgrep's.
func (p *cpPart) scaFindings(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	sc, err := p.c.st.Scans.CreateScan(ctx, scans.Scan{ID: uuid.NewString(), CompanyID: p.c.id, ProjectID: p.project, Branch: "main", Engine: "osv",
		Tool: "semgrep", Status: scans.ScanProcessing, CreatedAt: "2025-05-01T10:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	var found []sca.Issue
	var ids []string
	for n := range cpSCA {
		adv := fmt.Sprintf("GHSA-0000-0000-%04d", n)
		i := sca.Issue{ID: findings.IssueID(p.c.id, p.project, "main", "semgrep", adv), ProjectID: p.project, Branch: "main", Tool: "semgrep",
			IDs: []string{adv}, Classification: adv, Severity: "HIGH", Package: sca.Package{Name: fmt.Sprintf("pkg%d", n), Version: "1.0.0", Ecosystem: "npm"},
			Location: sca.Location{Path: "package-lock.json"}}
		found, ids = append(found, i), append(ids, i.ID)
	}
	if err := p.c.st.SCA.PutScanSCAIssues(ctx, p.c.id, sc, found); err != nil {
		t.Fatal(err)
	}
	return ids
}

// start stores the part's operation: a bulk triage of its project to
// false_positive, or, with SCA findings, the application of a rule of the
// project that sets it to semgrep's findings.
func (p *cpPart) start(t *testing.T) schema.TriageOpItem {
	t.Helper()
	ctx := context.Background()
	if p.sca == nil {
		return p.triage(t, schema.TriageOpItem{Status: "false_positive"})
	}
	r, err := p.c.st.Triage.CreateTriageRule(ctx, triage.Rule{CompanyID: p.c.id, ProjectID: p.project, Matcher: triagemodel.Matcher{Tool: "semgrep"},
		Action: triagemodel.Action{Status: "false_positive", Reason: "generated code"}, Enabled: true, CreatedBy: 1})
	if err != nil {
		t.Fatal(err)
	}
	op, err := p.c.st.Triage.CreateRuleOp(ctx, schema.TriageOpItem{CompanyID: p.c.id, UserID: 1, RuleID: r.ID, Status: r.Action.Status, Reason: r.Action.Reason},
		triage.RuleApplyAudit(r, 0))
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// triage stores a bulk triage of the part's project (op's status and
// terms).
func (p *cpPart) triage(t *testing.T, op schema.TriageOpItem) schema.TriageOpItem {
	t.Helper()
	q, err := json.Marshal(issuelists.IssueFilter{Scopes: []schema.Scope{{ProjectID: p.project}}})
	if err != nil {
		t.Fatal(err)
	}
	op.CompanyID, op.UserID, op.Filters, op.Query = p.c.id, 1, `{"project":"P"}`, string(q)
	op, err = p.c.st.Triage.CreateTriageOp(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// wanted is what the operation must end with: a bulk triage matches every
// issue and changes those not already false_positive; a rule matches only
// what it changes: those and the SCA findings.
func (p *cpPart) wanted() (matched, changed int64) {
	changed = cpIssues - (cpIssues+4)/5 + int64(len(p.sca))
	if p.sca != nil {
		return changed, changed
	}
	return cpIssues, changed
}

// changed counts the part's findings the operation changed so far.
func (p *cpPart) changed(t *testing.T) int64 {
	t.Helper()
	ctx := context.Background()
	issues, err := findings.ByID(ctx, p.c.st.Findings, p.c.id, p.issues)
	if err != nil || len(issues) != cpIssues {
		t.Fatalf("%d issues read: %v", len(issues), err)
	}
	n := -int64((cpIssues + 4) / 5)
	for _, i := range issues {
		if i.Status == "false_positive" {
			n++
		}
	}
	for _, id := range p.sca {
		i, err := p.c.st.SCA.GetSCAIssue(ctx, p.c.id, id)
		if err != nil {
			t.Fatal(err)
		}
		if i.Status == "false_positive" {
			n++
		}
	}
	return n
}

// processedBefore is how many ids precede the operation's checkpoint.
func (p *cpPart) processedBefore(t *testing.T, op schema.TriageOpItem) int64 {
	t.Helper()
	n := int64(op.Pos)
	for k := range min(op.Page, op.Pages) {
		ids, err := p.c.st.Triage.TriageIDs(context.Background(), p.c.id, op.ID, k)
		if err != nil {
			t.Fatal(err)
		}
		n += int64(len(ids))
	}
	return n
}

// checkExact fails unless the stored operation counts exactly what is
// committed: its changed count the findings changed, its processed count
// the ids before its position.
func (p *cpPart) checkExact(t *testing.T, id, when string) schema.TriageOpItem {
	t.Helper()
	op, err := p.c.st.Triage.GetTriageOp(context.Background(), p.c.id, id)
	if err != nil {
		t.Fatal(err)
	}
	if op.State != triage.OpApplying && op.State != triage.OpDone {
		return op // nothing applied yet
	}
	got, before := p.changed(t), p.processedBefore(t, op)
	if op.Changed != got || op.Processed != before || op.Processed > op.Matched {
		t.Fatalf("%s: operation %+v counts changed %d, processed %d; committed: %d changed, %d ids before its position",
			when, op, op.Changed, op.Processed, got, before)
	}
	return op
}

// checkDone fails unless the operation is done with the exact counts.
func (p *cpPart) checkDone(t *testing.T, id, when string) schema.TriageOpItem {
	t.Helper()
	op := p.checkExact(t, id, when)
	matched, changed := p.wanted()
	if op.State != triage.OpDone || op.Matched != matched || op.Processed != matched || op.Changed != changed {
		t.Fatalf("%s: done %+v, want matched = processed = %d, changed %d", when, op, matched, changed)
	}
	return op
}

// errDied is how a call fails once the worker died.
var errDied = errors.New("worker died")

// dyingStore is a store on the same table whose worker dies at the n-th
// write call of its applying (a step's transaction, the settling of
// counters, the end; not the start nor collecting), counted from 1, before
// the call reaches DynamoDB. From then on every call fails: nothing runs in
// a dead worker. (Dying just after DynamoDB did a write leaves the table
// as dying before the next write does.)
func dyingStore(st *store.Store, n int64) *store.Store {
	var dead atomic.Bool
	var writes atomic.Int64
	die := func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("die", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if dead.Load() || (applyingWrite(in.Parameters) && writes.Add(1) == n) {
				dead.Store(true)
				return middleware.InitializeOutput{}, middleware.Metadata{}, errDied
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
	}
	db := dynamodb.New(st.Client().Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(slices.Clone(o.APIOptions), die)
	})
	return store.New(db, st.TableName())
}

// applyingWrite reports whether a call's input writes, and not as the
// start of an attempt (which names attempt) or a collecting step (which
// names cursor).
func applyingWrite(in any) bool {
	var names []map[string]string
	switch in := in.(type) {
	case *dynamodb.UpdateItemInput:
		names = append(names, in.ExpressionAttributeNames)
	case *dynamodb.TransactWriteItemsInput:
		for _, item := range in.TransactItems {
			if item.Update != nil {
				names = append(names, item.Update.ExpressionAttributeNames)
			}
		}
	case *dynamodb.PutItemInput, *dynamodb.DeleteItemInput, *dynamodb.BatchWriteItemInput:
	default:
		return false
	}
	for _, m := range names {
		for _, name := range m {
			if name == "attempt" || name == "cursor" {
				return false
			}
		}
	}
	return true
}

// A worker dies at every write call of an operation's applying in turn
// (every chunk of every page, the end), each delivery resuming where the
// last one died, getting one write in and dying before its next: at every
// death the operation counts exactly what is committed, the last delivery
// ends it with exact counts, a late one changes nothing, and the recount
// agrees. Both kinds of operation: a bulk triage of two pages, and a
// rule's application whose last page holds SCA findings. (Four writes
// each, so that the deliveries stay within bulktriage.MaxAttempts.)
func TestCheckpointExactWhereverTheWorkerDies(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	for _, kind := range []string{"triage", "rule"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := newCPCompany(t, st)
			p := c.part(t, kind, kind == "rule")
			op := p.start(t)
			job := bulktriage.Job{CompanyID: c.id, ID: op.ID}
			size := cpPage
			if kind == "rule" {
				size = cpIssues // one page of issues, one of SCA findings
			}
			deaths := int64(0)
			for {
				at := int64(2) // the first write a delivery makes is the one the last died before
				if deaths == 0 {
					at = 1
				}
				err := (&bulktriage.Worker{Store: bulktriage.StoreOf(dyingStore(st, at)), Log: quiet(), PageSize: size}).Run(ctx, job)
				if err == nil {
					break // the operation ended before a write this delivery would die at
				}
				deaths++
				if when := fmt.Sprintf("died before write %d", deaths); !errors.Is(err, errDied) {
					t.Fatalf("%s: the worker stopped with %v", when, err)
				} else {
					p.checkExact(t, op.ID, when)
				}
			}
			done := p.checkDone(t, op.ID, "after every death")
			// One write ends the operation; the others applied its pages,
			// more of them than pages: some page took several transactions.
			if deaths-1 <= int64(done.Pages) {
				t.Fatalf("%d pages applied in %d transactions", done.Pages, deaths-1)
			}
			if err := (&bulktriage.Worker{Store: bulktriage.StoreOf(st), Log: quiet(), PageSize: size}).Run(ctx, job); err != nil {
				t.Fatal(err)
			}
			if late := p.checkExact(t, op.ID, "late delivery"); fmt.Sprint(late) != fmt.Sprint(done) {
				t.Fatalf("a late delivery moved %+v to %+v", done, late)
			}
			testenv.Recount(t, st, c.id)
		})
	}
}

// Deliveries of one operation: one holding a checkpoint that was never
// stored (the right position, counts of its own) is refused and goes on
// from the stored one; three running at once apply and count every step
// once; one holding the first page's checkpoint once the operation is
// done changes nothing.
func TestCheckpointRefusesStaleDeliveries(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	c := newCPCompany(t, st)
	for _, kind := range []string{"rule"} { // its pages: issues, then SCA findings
		p := c.part(t, kind, kind == "rule")
		op := p.start(t)
		started, ok, err := st.Triage.StartTriageOp(ctx, c.id, op.ID, bulktriage.MaxAttempts)
		if err != nil || !ok {
			t.Fatalf("start: %v %v", ok, err)
		}
		for started.State == triage.OpCollecting {
			started = p.collect(t, started)
		}
		forged := started
		forged.Processed, forged.Changed = 7, 7
		after, err := st.Triage.ApplyTriagePage(ctx, forged)
		if err != nil {
			t.Fatalf("%s: forged checkpoint: %v", kind, err)
		}
		if stored := p.checkExact(t, op.ID, kind+", forged checkpoint"); fmt.Sprint(stored) != fmt.Sprint(after) || stored.Page != 1 {
			t.Fatalf("%s: forged checkpoint: returned %+v, stored %+v", kind, after, stored)
		}
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for k := range errs {
			wg.Go(func() {
				errs[k] = (&bulktriage.Worker{Store: bulktriage.StoreOf(st), Log: quiet(), PageSize: cpPage}).Run(ctx, bulktriage.Job{CompanyID: c.id, ID: op.ID})
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		done := p.checkDone(t, op.ID, kind+", three deliveries at once")
		if late, err := st.Triage.ApplyTriagePage(ctx, started); err != nil || late.State != triage.OpDone {
			t.Fatalf("%s: stale delivery: %+v %v", kind, late, err)
		}
		if again := p.checkExact(t, op.ID, kind+", stale delivery"); fmt.Sprint(again) != fmt.Sprint(done) {
			t.Fatalf("%s: a stale delivery moved %+v to %+v", kind, done, again)
		}
	}
	testenv.Recount(t, st, c.id)
}

// collect collects the operation's next listing page as the worker does.
func (p *cpPart) collect(t *testing.T, op schema.TriageOpItem) schema.TriageOpItem {
	t.Helper()
	ctx := context.Background()
	if op.RuleID != "" {
		next, err := p.c.st.Triage.CollectRulePage(ctx, op, cpPage)
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	var f issuelists.IssueFilter
	if err := json.Unmarshal([]byte(op.Query), &f); err != nil {
		t.Fatal(err)
	}
	found, err := p.c.st.Lists.ListIssues(ctx, p.c.id, f, page.Request{Limit: cpPage, Token: op.Cursor})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(found.Items))
	for n := range found.Items {
		ids[n] = found.Items[n].ID
	}
	next, err := p.c.st.Triage.CollectTriageIDs(ctx, op, ids, found.Next)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// recordingStore is a store on the same table that tells, for each
// transaction it writes, whether it writes an item (a Put: an issue, its
// history entry, an id page) and whether it moves the operation's
// checkpoint (an update naming pos, or cursor while collecting).
func recordingStore(st *store.Store, record func(puts, checkpoint bool)) *store.Store {
	rec := func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("record", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok {
				puts, checkpoint := false, false
				for _, item := range tx.TransactItems {
					puts = puts || item.Put != nil
					if u := item.Update; u != nil {
						for _, name := range u.ExpressionAttributeNames {
							checkpoint = checkpoint || name == "pos" || name == "cursor"
						}
					}
				}
				record(puts, checkpoint)
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
	}
	db := dynamodb.New(st.Client().Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(slices.Clone(o.APIOptions), rec)
	})
	return store.New(db, st.TableName())
}

// A bulk triage that gives an owner to accepted risks stored without an
// end (before acceptances had terms): the write gives each one the
// company's default end, so each change also writes a history entry that
// the change as asked for did not have. Every transaction that writes
// issues still carries the checkpoint (the step sizes its chunk on the
// changes as they will be written), so the counts stay exact.
func TestCheckpointInEveryTransactionOfTermsSettled(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	c := newCPCompany(t, st)
	p := c.part(t, "legacy", false, func(i *findings.Issue) { i.Status = "accepted_risk" })
	issues, err := findings.ByID(ctx, st.Findings, c.id, p.issues)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range issues {
		i.Terms, i.DuePK, i.DueSK = schema.Terms{}, "", "" // as stored before terms
		item, err := attributevalue.MarshalMap(i)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.TableName()), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	op := p.triage(t, schema.TriageOpItem{Status: "accepted_risk", RiskOwner: 2})
	var mu sync.Mutex
	var steps, bare int
	worker := &bulktriage.Worker{Store: bulktriage.StoreOf(recordingStore(st, func(puts, checkpoint bool) {
		mu.Lock()
		defer mu.Unlock()
		if puts && !checkpoint {
			bare++
		}
		if puts && checkpoint {
			steps++
		}
	})), Log: quiet(), PageSize: cpPage}
	if err := worker.Run(ctx, bulktriage.Job{CompanyID: c.id, ID: op.ID}); err != nil {
		t.Fatal(err)
	}
	done, err := st.Triage.GetTriageOp(ctx, c.id, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if issues, err = findings.ByID(ctx, st.Findings, c.id, p.issues); err != nil {
		t.Fatal(err)
	}
	owned := 0
	for _, i := range issues {
		if i.Status == "accepted_risk" && i.Owner == 2 && i.ExpiresAt != "" {
			owned++
		}
	}
	if done.State != triage.OpDone || done.Matched != cpIssues || done.Processed != cpIssues || done.Changed != cpIssues || owned != cpIssues {
		t.Fatalf("done %+v; %d issues owned with an end", done, owned)
	}
	if bare != 0 || steps <= 2*done.Pages { // collecting is a transaction per page
		t.Fatalf("%d transactions wrote issues without the checkpoint; %d with it, for %d pages", bare, steps, done.Pages)
	}
	testenv.Recount(t, st, c.id)
}
