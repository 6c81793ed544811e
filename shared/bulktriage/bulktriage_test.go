package bulktriage_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/bulktriage"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/store/triage"
)

// Streams: the worker reads the table's stream, on a DynamoDB Local of this
// package's own.
// The one test on a table with a stream, TestBulkTriageOf20000, is make
// bench's, which starts a DynamoDB Local for it alone; make test skips it,
// so the package shares make test's instance.
func TestMain(m *testing.M) { testenv.Main(m) }

// world is a company whose project Web holds n issues (every seventh
// already false_positive) and whose project Lib holds 300 more.
type world struct {
	env     *testenv.Env
	h       http.Handler
	company *testenv.Company
}

func newWorld(t *testing.T, env *testenv.Env, name string, n int) *world {
	t.Helper()
	w := &world{env: env, h: issues.New(env.Deps), company: env.Company(t, name)}
	ctx := context.Background()
	var seed []findings.Issue
	for _, pr := range []struct {
		name string
		n    int
	}{{"Web", n}, {"Lib", 300}} {
		p, err := env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: w.company.ID, Name: pr.name, RepoURL: "https://github.com/acme/" + strings.ToLower(pr.name)})
		if err != nil {
			t.Fatal(err)
		}
		for k := range pr.n {
			status := "open"
			if k%7 == 0 {
				status = "false_positive"
			}
			seed = append(seed, findings.Issue{
				ID:        uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%s-%s-%d", name, pr.name, k)).String(),
				ProjectID: p.ID, ProjectName: p.Name, Branch: []string{"main", "dev"}[k%2], Tool: "semgrep",
				CWE: []int{79, 89, 22, findings.NoCWE}[k%4], FilePath: fmt.Sprintf("src/pkg%d/file%d.go", k%5, k%3),
				Urgency: findings.Urgencies[k%4], Status: status, Fingerprint: fmt.Sprintf("fp%d", k),
				CreatedAt: fmt.Sprintf("2025-04-%02dT10:00:00Z", 1+k%28),
			})
		}
	}
	if err := bulkload.Issues(ctx, env.Store, w.company.ID, seed, 4, nil); err != nil {
		t.Fatal(err)
	}
	return w
}

// webCounts is what a triage of project Web to false_positive must
// answer: n matched, those not already false_positive changed.
func webCounts(n int) (matched, changed int64) {
	return int64(n), int64(n - (n+6)/7)
}

type opJSON struct {
	ID        string            `json:"id"`
	State     string            `json:"state"`
	Status    string            `json:"status"`
	RuleID    string            `json:"rule_id"`
	ExpiresAt string            `json:"expires_at"`
	Owner     int64             `json:"owner"`
	Filters   map[string]string `json:"filters"`
	Matched   int64             `json:"matched"`
	Processed int64             `json:"processed"`
	Changed   int64             `json:"changed"`
	Error     string            `json:"error"`
}

const webBody = `{"filters":{"project":"Web"},"status":"false_positive"}`

// start posts a bulk triage that must answer 202 with a queued operation.
func (w *world) start(t *testing.T, body string, header ...string) opJSON {
	t.Helper()
	res := testenv.Do(t, w.h, "POST", "/issues/triage", body, append(testenv.Key(w.company.Admin), header...)...)
	if res.Status != http.StatusAccepted {
		t.Fatalf("POST /issues/triage: %d %s", res.Status, res.Body)
	}
	var a struct {
		Operation opJSON `json:"operation"`
	}
	res.Decode(t, &a)
	if a.Operation.State != triage.OpQueued || a.Operation.Matched != 0 || a.Operation.ID == "" {
		t.Fatalf("new operation %+v", a.Operation)
	}
	return a.Operation
}

func (w *world) get(t *testing.T, id string) opJSON {
	t.Helper()
	res := testenv.Do(t, w.h, "GET", "/issues/triage/"+id, "", testenv.Key(w.company.Admin)...)
	if res.Status != http.StatusOK {
		t.Fatalf("GET /issues/triage/%s: %d %s", id, res.Status, res.Body)
	}
	var a struct {
		Operation opJSON `json:"operation"`
	}
	res.Decode(t, &a)
	return a.Operation
}

// wait follows the operation until it is done or failed, reading it
// again after every write the store completes (the worker's steps); the
// counts only grow meanwhile. It answers the operation as the poll route
// shows it.
func (w *world) wait(t *testing.T, writes *testenv.Writes, id string) opJSON {
	t.Helper()
	var last schema.TriageOpItem
	writes.Until(t, "operation "+id+" done or failed", 10*time.Minute, func() bool {
		op, err := w.env.Store.Triage.GetTriageOp(context.Background(), w.company.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if op.Matched < last.Matched || op.Processed < last.Processed || op.Changed < last.Changed || op.Processed > op.Matched {
			t.Fatalf("counts went back or past matched: %+v after %+v", op, last)
		}
		last = op
		return op.State == triage.OpDone || op.State == triage.OpFailed
	})
	return w.get(t, id)
}

// statusCounts counts the company's issues by status (EachIssue reads
// every issue).
func (w *world) statusCounts(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := w.env.Store.Lists.EachIssue(context.Background(), w.company.ID, func(i findings.Issue) error {
		out[i.ProjectName+"/"+i.Status]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// triageAudits are the company's issue.triage audit entries.
func (w *world) triageAudits(t *testing.T) []tenancy.AuditRecord {
	t.Helper()
	entriesPage, err := w.env.Store.Tenancy.ListAudit(context.Background(), w.company.ID, tenancy.AuditFilter{Action: "issue.triage"}, page.Request{Limit: 50})
	entries := entriesPage.Items
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// operations are the company's stored operation and id-page items.
func (w *world) operations(t *testing.T) int {
	t.Helper()
	kc := expression.Key("PK").Equal(expression.Value(schema.CompanyPK(w.company.ID))).And(expression.Key("SK").BeginsWith("TRIAGE#"))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.env.Store.Client().Query(context.Background(), &dynamodb.QueryInput{TableName: &[]string{w.env.Store.TableName()}[0],
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return int(out.Count)
}

// A bulk triage of 20,000 matches runs on the stream through the ingester
// (as in AWS and the dev server) to exact counts: every match changed but
// those already in the status, the other project untouched, every group
// counter exact, one audit entry, a history entry and an event per change.
// A retry with the same Idempotency-Key answers the same operation; a
// retry without one runs a new operation that changes nothing.
func TestBulkTriageOf20000(t *testing.T) {
	env := testenv.NewStreaming(t)
	const n = 20_000
	w := newWorld(t, env, "Acme", n)
	writes := env.WatchWrites(t)
	env.StartIngester(t)
	op := w.start(t, webBody, "Idempotency-Key", "bulk-1")
	if op.Filters["project"] != "Web" || op.Status != "false_positive" {
		t.Errorf("operation %+v", op)
	}
	done := w.wait(t, writes, op.ID)
	matched, changed := webCounts(n)
	if done.State != triage.OpDone || done.Matched != matched || done.Processed != matched || done.Changed != changed {
		t.Fatalf("done %+v, want matched %d changed %d", done, matched, changed)
	}
	counts := w.statusCounts(t)
	if counts["Web/false_positive"] != n || counts["Web/open"] != 0 || counts["Lib/open"] != 300-(300+6)/7 {
		t.Errorf("statuses after: %v", counts)
	}
	testenv.Recount(t, env.Store, w.company.ID)
	if a := w.triageAudits(t); len(a) != 1 || a[0].TargetID != op.ID {
		t.Errorf("audit entries %+v, want one for the operation", a)
	}
	one := uuid.NewSHA1(uuid.NameSpaceOID, []byte("Acme-Web-1")).String()
	hist, err := env.Store.Lists.IssueHistory(context.Background(), w.company.ID, one)
	if err != nil || len(hist) == 0 || hist[len(hist)-1].To != "false_positive" {
		t.Errorf("history of %s: %+v %v", one, hist, err)
	}
	if _, ok := testenv.OutboxEvent(t, env.Store, w.company.ID, "issue_status_changed-"+one+"-v2"); !ok {
		t.Errorf("no issue_status_changed event for %s", one)
	}

	// The same key: the first answer again, no second operation.
	before := w.operations(t)
	res := testenv.Do(t, w.h, "POST", "/issues/triage", webBody, append(testenv.Key(w.company.Admin), "Idempotency-Key", "bulk-1")...)
	if res.Status != http.StatusAccepted || !strings.Contains(string(res.Body), op.ID) || res.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry with the key: %d %v %s", res.Status, res.Header, res.Body)
	}
	if after := w.operations(t); after != before {
		t.Errorf("the retry stored %d items", after-before)
	}
	// No key: a new operation, which matches the same and changes nothing.
	again := w.wait(t, writes, w.start(t, webBody).ID)
	if again.State != triage.OpDone || again.Matched != matched || again.Changed != 0 {
		t.Errorf("retry without a key: %+v", again)
	}
	testenv.Recount(t, env.Store, w.company.ID)
}

// failingTransactions is a client of the same table whose transaction
// number fail (counting from 1) fails, as a worker killed there would
// stop: what committed before stays. It keeps the client's retryer, so a
// refusal DynamoDB (Local, under load) asks to retry is retried as in
// production and the worker stops at that transaction, not at the first
// refusal.
func failingTransactions(t *testing.T, env *testenv.Env, fail int64) *store.Store {
	return killedAt(t, env, fail, 0)
}

// killedAt is failingTransactions whose DynamoDB call number refuse
// (counting every call from 1; 0 for none) also meets one refusal that the
// client's retryer retries (ThrottlingException, injected inside the
// SDK's retry loop, as DynamoDB gives under load).
func killedAt(t *testing.T, env *testenv.Env, fail, refuse int64) *store.Store {
	t.Helper()
	var txs, calls atomic.Int64
	kill := func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("kill", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if _, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok && txs.Add(1) == fail {
				return middleware.InitializeOutput{}, middleware.Metadata{}, errKilled
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
	}
	throttle := func(s *middleware.Stack) error {
		return s.Finalize.Insert(middleware.FinalizeMiddlewareFunc("refuse", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			if calls.Add(1) == refuse {
				return middleware.FinalizeOutput{}, middleware.Metadata{}, &smithy.GenericAPIError{Code: "ThrottlingException", Message: "injected"}
			}
			return next.HandleFinalize(ctx, in)
		}), "Retry", middleware.After)
	}
	db := dynamodb.New(env.Store.Client().Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(slices.Clone(o.APIOptions), kill, throttle)
	})
	return store.New(db, env.Store.TableName())
}

// errKilled is how a killed worker's transaction fails.
var errKilled = errors.New("killed")

// A worker killed while collecting, or midway through a page (some of its
// transactions committed), is resumed by the next delivery to the same
// exact counts, and a delivery after the end changes nothing.
func TestWorkerKilledMidwayResumes(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const n = 2_100
	for k, fail := range []int64{3, 20, 61} { // collecting, applying page 1, applying page 3
		t.Run(fmt.Sprintf("kill at transaction %d", fail), func(t *testing.T) {
			t.Parallel()
			killedMidwayResumes(t, env, log, fmt.Sprintf("Kill%d", k), n, fail)
		})
	}
}

// killedMidwayResumes is one case of TestWorkerKilledMidwayResumes: a
// world of its own whose operation's worker is killed at transaction fail.
func killedMidwayResumes(t *testing.T, env *testenv.Env, log *slog.Logger, name string, n int, fail int64) {
	w := newWorld(t, env, name, n)
	op := w.start(t, webBody)
	job := bulktriage.Job{CompanyID: w.company.ID, ID: op.ID}
	killed := &bulktriage.Worker{Store: bulktriage.StoreOf(failingTransactions(t, env, fail)), Log: log, PageSize: 500}
	if err := killed.Run(context.Background(), job); err == nil {
		t.Fatalf("kill at transaction %d: the worker did not stop", fail)
	}
	midway := w.get(t, op.ID)
	if midway.State == triage.OpDone || midway.State == triage.OpQueued {
		t.Fatalf("kill at transaction %d: %+v", fail, midway)
	}
	worker := &bulktriage.Worker{Store: bulktriage.StoreOf(env.Store), Log: log, PageSize: 500}
	if err := worker.Run(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	done := w.get(t, op.ID)
	matched, changed := webCounts(n)
	if done.State != triage.OpDone || done.Matched != matched || done.Processed != matched || done.Changed != changed {
		t.Errorf("kill at transaction %d (midway %+v): done %+v, want matched %d changed %d", fail, midway, done, matched, changed)
	}
	if c := w.statusCounts(t); c["Web/false_positive"] != n {
		t.Errorf("kill at transaction %d: statuses %v", fail, c)
	}
	testenv.Recount(t, env.Store, w.company.ID)
	// A late delivery of the same record: nothing more.
	if err := worker.Run(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if late := w.get(t, op.ID); late.State != done.State || late.Matched != done.Matched || late.Processed != done.Processed || late.Changed != done.Changed {
		t.Errorf("a late delivery moved %+v to %+v", done, late)
	}
}

// Another company's operation id answers exactly like an unknown one; an
// id that is not a uuid is 400.
func TestOperationTenantIsolation(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a := newWorld(t, env, "Alpha", 1_001)
	b := &world{env: env, h: a.h, company: env.Company(t, "Beta")}
	op := a.start(t, webBody)
	theirs := testenv.Do(t, b.h, "GET", "/issues/triage/"+op.ID, "", testenv.Key(b.company.Admin)...)
	unknown := testenv.Do(t, b.h, "GET", "/issues/triage/"+uuid.NewString(), "", testenv.Key(b.company.Admin)...)
	if theirs.Status != http.StatusNotFound || string(theirs.Body) != string(unknown.Body) || unknown.Status != http.StatusNotFound {
		t.Errorf("another company's operation: %d %s; unknown: %d %s", theirs.Status, theirs.Body, unknown.Status, unknown.Body)
	}
	if res := testenv.Do(t, b.h, "GET", "/issues/triage/not-a-uuid", "", testenv.Key(b.company.Admin)...); res.Status != http.StatusBadRequest {
		t.Errorf("not a uuid: %d %s", res.Status, res.Body)
	}
	if got := a.get(t, op.ID); got.ID != op.ID {
		t.Errorf("own operation %+v", got)
	}
}

// Bad input past the ceiling is 400 naming the field, with no operation,
// no audit entry and no issue changed; up to the ceiling the answer comes
// at once, as before.
func TestBadInputCreatesNothing(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 1_001)
	for _, bad := range []struct{ body, names string }{
		{`{"filters":{"project":"Web"},"status":"suppressed"}`, "status"},
		{`{"filters":{"project":"Web"},"status":"nope"}`, "status"},
		{`{"filters":{"project":"Web","colour":"red"},"status":"fixed"}`, "colour"},
		{`{"filters":{},"status":"fixed"}`, "filters"},
		{`{"filters":{"project":"Web"},"status":"fixed","reason":"` + strings.Repeat("x", 2001) + `"}`, "reason"},
		{`{"filters":{"project":"Web"},"status":"fixed","extra":1}`, "extra"},
	} {
		res := testenv.Do(t, w.h, "POST", "/issues/triage", bad.body, testenv.Key(w.company.Admin)...)
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), bad.names) {
			t.Errorf("%.80s: %d %s", bad.body, res.Status, res.Body)
		}
	}
	if n := w.operations(t); n != 0 {
		t.Errorf("bad input stored %d operation items", n)
	}
	if a := w.triageAudits(t); len(a) != 0 {
		t.Errorf("bad input audited %+v", a)
	}
	if c := w.statusCounts(t); c["Web/open"] != 1_001-(1_001+6)/7 {
		t.Errorf("bad input changed issues: %v", c)
	}
	// 300 matches: at once, as before.
	res := testenv.Do(t, w.h, "POST", "/issues/triage", `{"filters":{"project":"Lib"},"status":"false_positive"}`, testenv.Key(w.company.Admin)...)
	body := res.JSON(t)
	if res.Status != http.StatusOK || body["matched"] != float64(300) || body["changed"] != float64(300-(300+6)/7) {
		t.Errorf("300 matches: %d %s", res.Status, res.Body)
	}
}
