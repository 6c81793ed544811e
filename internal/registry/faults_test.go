package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	"github.com/acme/codescan-api/shared/store/triage"
	ticketing "github.com/acme/codescan-api/shared/tickets"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// faultKinds are the refusals real DynamoDB gives under load that DynamoDB
// Local never does.
var faultKinds = []struct {
	name string
	err  func() error
}{
	{"ProvisionedThroughputExceeded", func() error {
		return &types.ProvisionedThroughputExceededException{Message: aws.String("injected")}
	}},
	{"ThrottlingException", func() error { return &smithy.GenericAPIError{Code: "ThrottlingException", Message: "injected"} }},
	{"RequestLimitExceeded", func() error { return &types.RequestLimitExceeded{Message: aws.String("injected")} }},
	{"TransactionConflict", func() error {
		return &types.TransactionCanceledException{Message: aws.String("injected"),
			CancellationReasons: []types.CancellationReason{{Code: aws.String("TransactionConflict")}}}
	}},
	{"timeout", func() error { return &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded} }},
}

// fullFaults runs every error kind at every call position (`make faults`);
// without it each position fails with one kind, the kinds taking turns, so
// every position and every kind is covered in a fifth of the time.
var fullFaults = os.Getenv("FAULTS") == "full"

// injector fails the failAt-th DynamoDB call (counted from reset) once.
type injector struct {
	mu     sync.Mutex
	calls  int
	failAt int
	err    func() error
}

func (f *injector) reset(failAt int, err func() error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.failAt, f.err = 0, failAt, err
}

func (f *injector) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// add puts the injector inside the SDK's retry loop, where DynamoDB's
// refusals arrive: each injected one meets the client's retry policy (the
// one layer that retries them, see shared/awsclient) and then the store's
// handling of what is left. A call counts once per attempt.
func (f *injector) add(stack *middleware.Stack) error {
	return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("inject-fault",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			f.mu.Lock()
			f.calls++
			fail := f.calls == f.failAt
			f.mu.Unlock()
			if fail {
				return middleware.FinalizeOutput{}, middleware.Metadata{}, f.err()
			}
			return next.HandleFinalize(ctx, in)
		}), "Retry", middleware.After)
}

// faultWorld is one fresh table with a company, the route's fixtures and a
// DynamoDB client that can fail on demand.
type faultWorld struct {
	env   *testenv.Env
	co    *testenv.Company
	inj   *injector
	fixed map[string]string // values the request uses
}

func newFaultWorld(t *testing.T, setup func(t *testing.T, w *faultWorld)) *faultWorld {
	t.Helper()
	env := testenv.New(t)
	w := &faultWorld{env: env, co: env.Company(t, "Acme"), inj: &injector{}, fixed: map[string]string{}}
	if setup != nil {
		setup(t, w)
	}
	w.inject()
	return w
}

// inject routes the world's DynamoDB calls through its injector.
func (w *faultWorld) inject() {
	opts := w.env.Store.Client().Options()
	opts.APIOptions = append(slices.Clone(opts.APIOptions), w.inj.add)
	w.env.Store.SetClient(dynamodb.New(opts))
}

// items reads every item of the world's table.
func (w *faultWorld) items(t *testing.T) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	var start map[string]types.AttributeValue
	for {
		res, err := w.env.Store.Client().Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(w.env.Store.TableName()), ExclusiveStartKey: start})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res.Items...)
		if res.LastEvaluatedKey == nil {
			return out
		}
		start = res.LastEvaluatedKey
	}
}

// clone is a new world on a fresh table holding a copy of w's items (its
// company, keys and fixtures), without running the setup again.
func (w *faultWorld) clone(t *testing.T) *faultWorld {
	t.Helper()
	items := w.items(t)
	env := testenv.New(t)
	for start := 0; start < len(items); start += 25 {
		var reqs []types.WriteRequest
		for _, it := range items[start:min(start+25, len(items))] {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
		res, err := env.Store.Client().BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{env.Store.TableName(): reqs}})
		if err != nil || len(res.UnprocessedItems) > 0 {
			t.Fatalf("clone: %v %v", err, res.UnprocessedItems)
		}
	}
	c := &faultWorld{env: env, co: w.co, inj: &injector{}, fixed: w.fixed}
	c.inject()
	return c
}

// volatile matches what differs between two runs of the same request:
// times, inverted times in sort keys, lease tokens.
var volatile = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z|\b\d{13}\b`)

// state is every item of the world's table, normalised and sorted.
func (w *faultWorld) state(t *testing.T) []string {
	t.Helper()
	w.inj.reset(0, nil) // reading the state never fails
	var out []string
	for _, it := range w.items(t) {
		var m map[string]any
		if err := attributevalue.UnmarshalMap(it, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"lease_owner", "lease_until", "ver", "expires_at"} {
			delete(m, k)
		}
		b, _ := json.Marshal(m)
		out = append(out, volatile.ReplaceAllString(string(b), "<t>"))
	}
	sort.Strings(out)
	return out
}

// faultCase is one write route and a request to it.
type faultCase struct {
	route string // "METHOD /path" of the route table
	setup func(t *testing.T, w *faultWorld)
	path  func(w *faultWorld) string
	body  string
	// multiStep routes (scan uploads) write in steps that a retry completes:
	// after a 503 their state may lie between before and after, and must
	// reach exactly the clean run's state when the request is repeated.
	multiStep bool
	header    []string // more request headers, name and value
	// changes: the clean run must change what is stored (a case whose
	// request could find nothing to do would test nothing).
	changes bool
}

const sarifBody = `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gosec"}},"results":[
{"ruleId":"G201","message":{"text":"SQL string formatting"},"properties":{"tags":["CWE-89"]},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"db/q.go"},"region":{"startLine":10}}}]},
{"ruleId":"G101","message":{"text":"Hard-coded credential"},"properties":{"tags":["CWE-798"]},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"cfg/c.go"},"region":{"startLine":3}}}]},
{"ruleId":"G304","message":{"text":"File path from input"},"properties":{"tags":["CWE-22"]},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"fs/o.go"},"region":{"startLine":7}}}]}]}]}`

// uploaded gives the world a scan run with three issues (and the run id).
func uploaded(t *testing.T, w *faultWorld) {
	t.Helper()
	run := "6a1e5b3c-2d4f-4a8b-9c0d-1e2f3a4b5c6d"
	res := testenv.Do(t, registry.Mux(w.env.Deps), "POST", "/scan-upload?engine=sarif&project=shop&branch=main&run_id="+run, sarifBody,
		append(testenv.Key(w.co.Admin), "Content-Type", "application/json")...)
	if res.Status != 200 {
		t.Fatalf("setup upload: %d %s", res.Status, res.Body)
	}
	var body struct {
		ScanID string `json:"sast_scan_id"`
	}
	res.Decode(t, &body)
	var up struct {
		ProjectID int64 `json:"project_id"`
	}
	res.Decode(t, &up)
	w.fixed["run"], w.fixed["scan"], w.fixed["project"] = run, body.ScanID, fmt.Sprint(up.ProjectID)
	// The ingester writes the findings (asynchronously in AWS; here at once).
	w.env.Ingest(t, w.co.ID, body.ScanID)
	var ids []string
	if err := w.env.Store.Lists.EachScanIssue(context.Background(), w.co.ID, body.ScanID, func(i findings.Issue) error {
		ids = append(ids, i.ID)
		return nil
	}); err != nil || len(ids) != 3 {
		t.Fatalf("setup issues: %v %v", ids, err)
	}
	w.fixed["issue"] = ids[0]
}

var faultCases = []faultCase{
	{route: "POST /teams", path: func(*faultWorld) string { return "/teams" },
		body: `{"name":"AppSec","project_tags":["backend"],"repo_url_patterns":["github.com/acme/"]}`},
	{route: "DELETE /policies/{policy_id}", setup: func(t *testing.T, w *faultWorld) {
		p, err := w.env.Store.Catalog.CreatePolicy(context.Background(), schema.Policy{CompanyID: w.co.ID, Name: "No secrets", PolicyType: "BLAST", Active: true})
		if err != nil {
			t.Fatal(err)
		}
		w.fixed["policy"] = fmt.Sprint(p.ID)
	}, path: func(w *faultWorld) string { return "/policies/" + w.fixed["policy"] }},
	{route: "POST /notifications/company-defaults/{type_code}", path: func(*faultWorld) string { return "/notifications/company-defaults/scan_completed" },
		body: `{"email_enabled":true,"webhook_enabled":false}`},
	{route: "POST /notifications/preferences/{type_code}", path: func(*faultWorld) string { return "/notifications/preferences/new_critical_issue" },
		body: `{"email_enabled":false}`},
	{route: "POST /scan-upload", multiStep: true, path: func(*faultWorld) string {
		return "/scan-upload?engine=sarif&project=shop&branch=main&run_id=0d9c8b7a-6f5e-4d3c-8b2a-1f0e9d8c7b6a"
	}, body: sarifBody},
	{route: "POST /scan-upload", multiStep: true, setup: uploaded, path: func(*faultWorld) string {
		return "/scan-upload?engine=sarif&project=shop&branch=main&run_id=1e2d3c4b-5a69-4877-8695-a4b3c2d1e0f9"
	}, body: strings.Replace(sarifBody, "cfg/c.go", "cfg/d.go", 1)}, // one fixed, one new, one re-detected
	// A chunked upload: its first chunk (the run and its quota), a chunk
	// after it, and the final chunk, which completes the run. Each on a
	// run of its own: the worlds share the bucket.
	{route: "POST /scan-upload", path: chunkedPath("3a4b5c6d-7e8f-4a9b-8c0d-1e2f3a4b5c60"), body: chunkOf(0), header: chunkHeader(0)},
	{route: "POST /scan-upload", setup: chunksSent("3a4b5c6d-7e8f-4a9b-8c0d-1e2f3a4b5c61", 1), path: chunkedPath("3a4b5c6d-7e8f-4a9b-8c0d-1e2f3a4b5c61"),
		body: chunkOf(1), header: chunkHeader(1)},
	{route: "POST /scan-upload", multiStep: true, setup: chunksSent("3a4b5c6d-7e8f-4a9b-8c0d-1e2f3a4b5c62", 2), path: chunkedPath("3a4b5c6d-7e8f-4a9b-8c0d-1e2f3a4b5c62"),
		body: chunkOf(2), header: chunkHeader(2)},
	{route: "POST /code-upload", path: func(*faultWorld) string {
		return "/code-upload?run_id=2f3e4d5c-6b7a-4988-a7b6-c5d4e3f2a1b0&path=db/q.go"
	}, body: "package db\n\nfunc Q(id string) { db.Query(\"SELECT \" + id) }\n"},
	{route: "POST /ci-data-upload", setup: uploaded, path: func(w *faultWorld) string {
		return "/ci-data-upload?platform=github&run_id=" + w.fixed["run"]
	}, body: `{"GITHUB_REPOSITORY":"acme/shop","GITHUB_SHA":"e83c5163316f89bfbde7d9ab23ca2e25604af290"}`},
	{route: "POST /git-config-upload", setup: uploaded, path: func(w *faultWorld) string {
		return "/git-config-upload?run_id=" + w.fixed["run"]
	}, body: "[remote \"origin\"]\n\turl = git@github.com:acme/shop.git\n"},
	{route: "PATCH /issue/{issue_id}", setup: uploaded, path: func(w *faultWorld) string { return "/issue/" + w.fixed["issue"] },
		body: `{"status":"false_positive","reason":"test data"}`},
	{route: "POST /issues/triage", setup: uploaded, path: func(*faultWorld) string { return "/issues/triage" },
		body: `{"filters":{"project":"shop","urgency":"HI"},"status":"accepted_risk","reason":"legacy"}`},

	// Accounts: users and key revocation (key creation: see faultExempt).
	{route: "POST /users", path: func(*faultWorld) string { return "/users" },
		body: `{"email":"dev@acme.test","first_name":"Dev","last_name":"One","permissions":["scans.upload_scan"],"subject":"idp|dev"}`},
	{route: "PATCH /users/{user_id}", setup: withMember, path: func(w *faultWorld) string { return "/users/" + w.fixed["user"] },
		body: `{"permissions":["policies.manage_policy"],"is_admin":true}`},
	{route: "DELETE /api-keys/{key_id}", setup: withMember, path: func(w *faultWorld) string { return "/api-keys/" + w.fixed["key"] }},
	// The client workflow: projects, blocking rules, policies.
	{route: "PATCH /projects/{project_id}", setup: uploaded, path: func(w *faultWorld) string { return "/projects/" + w.fixed["project"] },
		body: `{"default_branch":"develop"}`},
	{route: "POST /blocking-rules", path: func(*faultWorld) string { return "/blocking-rules" },
		body: `{"slug":"critical","name":"Critical","conditions":{"min_urgency":"CR","paths":["src/**"]}}`},
	{route: "PATCH /blocking-rules/{rule_id}", setup: blockingRule, path: func(w *faultWorld) string { return "/blocking-rules/" + w.fixed["rule"] },
		body: `{"slug":"renamed","active":false}`},
	{route: "DELETE /blocking-rules/{rule_id}", setup: blockingRule, path: func(w *faultWorld) string { return "/blocking-rules/" + w.fixed["rule"] }},
	{route: "PATCH /triage-rules/{rule_id}", setup: triageRule(false), path: func(w *faultWorld) string { return "/triage-rules/" + w.fixed["triage"] },
		body: `{"enabled":false}`},
	{route: "DELETE /triage-rules/{rule_id}", setup: triageRule(false), path: func(w *faultWorld) string { return "/triage-rules/" + w.fixed["triage"] }},
	{route: "POST /triage-rules/{rule_id}/approve", setup: triageRule(true), path: func(w *faultWorld) string { return "/triage-rules/" + w.fixed["triage"] + "/approve" }},
	{route: "POST /triage-rules/{rule_id}/apply", setup: triageRule(false), path: func(w *faultWorld) string { return "/triage-rules/" + w.fixed["triage"] + "/apply" }},
	{route: "POST /policies", path: func(*faultWorld) string { return "/policies" },
		body: `{"name":"No SQL from strings","cwes":["CWE-89"]}`},
	// A filter's dry run over the company's recent events: its one write is
	// the audit entry.
	{route: "POST /webhooks/filter-dry-run", setup: uploaded, path: func(*faultWorld) string { return "/webhooks/filter-dry-run" },
		body: `{"filter":"event.type == \"scan_completed\""}`},
	// VEX import: the real go-vex document over SCA findings it names (two
	// changed, one skipped by a fixed statement); a dry run writes nothing.
	{route: "POST /vex", setup: scaFindings, path: func(*faultWorld) string { return "/vex" }, body: goVEX, changes: true},
	{route: "POST /vex", setup: scaFindings, path: func(*faultWorld) string { return "/vex?dry_run=true" }, body: goVEX},
	// Tickets: Jira integrations (a rename and transitions, which the site
	// is not asked about; a change of site, credentials, project or issue
	// type is checked against the site, functions/tickets) and ticket rules.
	{route: "PATCH /integrations/jira/{integration_uuid}", setup: jiraIntegration, path: func(w *faultWorld) string { return "/integrations/jira/" + w.fixed["jira"] },
		body: `{"name":"Security","done_transition":"Done"}`},
	{route: "DELETE /integrations/jira/{integration_uuid}", setup: jiraIntegration, path: func(w *faultWorld) string { return "/integrations/jira/" + w.fixed["jira"] }},
	{route: "PATCH /ticket-rules/{rule_id}", setup: ticketRule, path: func(w *faultWorld) string { return "/ticket-rules/" + w.fixed["ticket_rule"] },
		body: `{"grouping":"cwe","labels":["security"]}`},
	{route: "DELETE /ticket-rules/{rule_id}", setup: ticketRule, path: func(w *faultWorld) string { return "/ticket-rules/" + w.fixed["ticket_rule"] }},
}

// goVEX is the real OpenVEX document of openvex/go-vex (shared/vex's
// testdata): CVE-2023-3446 and CVE-2023-3817 not_affected in Alpine's
// libssl3 and libcrypto3 3.0.8-r3, CVE-2023-1255 among those fixed.
var goVEX = func() string {
	b, err := os.ReadFile("../../shared/vex/testdata/openvex/go-vex-v0.2.0.json")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// scaFindings gives the world a project with three SCA findings the go-vex
// document names: two it dismisses (open, fix_in_progress), one it skips.
func scaFindings(t *testing.T, w *faultWorld) {
	t.Helper()
	ctx := context.Background()
	p, err := w.env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: w.co.ID, Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		pkg, status string
		ids         []string
	}{
		{"libssl3", "open", []string{"ALPINE-CVE-2023-3446", "CVE-2023-3446"}},
		{"libcrypto3", "fix_in_progress", []string{"CVE-2023-3817"}},
		{"libssl3", "open", []string{"CVE-2023-1255"}},
	} {
		if _, err := w.env.Store.SCA.PutSCAIssue(ctx, w.co.ID, sca.Issue{ProjectID: p.ID, Branch: "main", Tool: "osv-scanner",
			IDs: f.ids, Classification: f.ids[0], CVE: f.ids[len(f.ids)-1], Severity: "HIGH", Status: f.status, Description: f.pkg,
			Package: sca.Package{Name: f.pkg, Version: "3.0.8-r3", Ecosystem: "Alpine:v3.17"}, Location: sca.Location{Path: "lockfile"}}); err != nil {
			t.Fatal(err)
		}
	}
}

// ticketsArea is the tickets store area on the world's table.
func ticketsArea(w *faultWorld) *storetickets.Tickets {
	return storetickets.New(w.env.Store.Client(), w.env.Store.TableName(), w.env.Deps.Clock())
}

// jiraIntegration gives the world a Jira integration (stored as the route
// stores one after the site's check).
func jiraIntegration(t *testing.T, w *faultWorld) {
	t.Helper()
	in, err := ticketsArea(w).CreateJira(context.Background(), schema.JiraIntegration{UUID: catalog.NewIntegrationUUID(), CompanyID: w.co.ID,
		Name: "Jira SEC", SiteURL: "https://acme.atlassian.net", Email: "bot@acme.test", AccountID: "5b10ac8d82e05b22cc7d4ef5",
		AccountName: "Bot", ProjectKey: "SEC", IssueType: "Bug", SealedToken: "sealed"})
	if err != nil {
		t.Fatal(err)
	}
	w.fixed["jira"] = in.UUID
}

// ticketRule gives the world a ticket rule sending SQL findings to a Jira
// integration.
func ticketRule(t *testing.T, w *faultWorld) {
	t.Helper()
	jiraIntegration(t, w)
	r, err := ticketsArea(w).CreateRule(context.Background(), schema.TicketRule{CompanyID: w.co.ID,
		Matcher:     schema.TicketMatcher{Matcher: triagemodel.Matcher{CWE: 89}},
		Destination: schema.TicketDestination{Kind: ticketing.SystemJira, Integration: w.fixed["jira"]}, Grouping: ticketing.GroupFinding})
	if err != nil {
		t.Fatal(err)
	}
	w.fixed["ticket_rule"] = r.ID
}

// chunkedPath is the path of a run that sarifBody is sent in chunks for.
func chunkedPath(run string) func(*faultWorld) string {
	return func(*faultWorld) string { return "/scan-upload?engine=sarif&project=shop&branch=main&run_id=" + run }
}

// chunkOf is the i-th of the three chunks of sarifBody.
func chunkOf(i int) string {
	n := len(sarifBody)
	return sarifBody[i*n/3 : (i+1)*n/3]
}

func chunkHeader(i int) []string {
	return []string{"Upload-Offset", fmt.Sprint(i * len(sarifBody) / 3), "Upload-Length", fmt.Sprint(len(sarifBody))}
}

// chunksSent sends the first n chunks of a chunked run.
func chunksSent(run string, n int) func(t *testing.T, w *faultWorld) {
	return func(t *testing.T, w *faultWorld) {
		t.Helper()
		for i := range n {
			fc := faultCase{route: "POST /scan-upload", path: chunkedPath(run), body: chunkOf(i), header: chunkHeader(i)}
			if res := w.do(t, fc); res.Status != 200 {
				t.Fatalf("setup chunk %d: %d %s", i, res.Status, res.Body)
			}
		}
	}
}

// withMember gives the world a member with a named API key.
func withMember(t *testing.T, w *faultWorld) {
	t.Helper()
	u := w.env.User(t, w.co, testenv.UserSpec{Email: "m@acme.test", Permissions: []string{routes.PermUploadScan}})
	k, err := w.env.Store.Tenancy.CreateAPIKey(context.Background(), schema.APIKey{CompanyID: w.co.ID, UserID: u.ID, Name: "CI"}, "csk_fault-test-key")
	if err != nil {
		t.Fatal(err)
	}
	w.fixed["user"], w.fixed["key"] = fmt.Sprint(u.ID), fmt.Sprint(k.ID)
}

// blockingRule gives the world a blocking rule.
func blockingRule(t *testing.T, w *faultWorld) {
	t.Helper()
	r, err := w.env.Store.Catalog.CreateBlockingRule(context.Background(), schema.BlockingRule{CompanyID: w.co.ID, Slug: "gate", Name: "Gate", Active: true, CI: true})
	if err != nil {
		t.Fatal(err)
	}
	w.fixed["rule"] = fmt.Sprint(r.ID)
}

// triageRule gives the world the uploaded scan and an enabled triage rule
// dismissing its SQL finding (awaiting approval, written by another user,
// when approval is true).
func triageRule(approval bool) func(t *testing.T, w *faultWorld) {
	return func(t *testing.T, w *faultWorld) {
		t.Helper()
		uploaded(t, w)
		r, err := w.env.Store.Triage.CreateTriageRule(context.Background(), triage.Rule{CompanyID: w.co.ID, CreatedBy: w.co.Admin.ID + 1,
			Enabled: true, RequiresApproval: approval, Matcher: triagemodel.Matcher{Tool: "gosec", CWE: 89},
			Action: triagemodel.Action{Status: "false_positive", Reason: "parameterised"}})
		if err != nil {
			t.Fatal(err)
		}
		w.fixed["triage"] = r.ID
	}
}

// Every write route, every DynamoDB call position of its request, each
// kind of refusal: the answer is 2xx (retried inside) or 503 with
// Retry-After; what is stored is the state before or after (or, for
// multi-step uploads, a state the retry completes), and the counters equal
// a recount; after a 503, repeating the request succeeds; either way the
// state is then exactly the clean run's.
func TestFaultInjection(t *testing.T) {
	covered := map[string]bool{}
	var cases atomic.Int64
	t.Run("cases", func(t *testing.T) {
		for _, fc := range faultCases {
			covered[fc.route] = true
			template := newFaultWorld(t, fc.setup)
			clean := template.clone(t)
			before := clean.state(t)
			res := clean.do(t, fc)
			if res.Status/100 != 2 {
				t.Fatalf("%s clean run: %d %s", fc.route, res.Status, res.Body)
			}
			calls, after := clean.inj.count(), clean.state(t)
			if fc.changes && slices.Equal(before, after) {
				t.Fatalf("%s clean run changed nothing: %s", fc.route, res.Body)
			}
			for k := 1; k <= calls; k++ {
				for n, kind := range faultKinds {
					if !fullFaults && (k+n)%len(faultKinds) != 0 {
						continue // make test: one kind per position, every kind in turn
					}
					what := fmt.Sprintf("%s, call %d of %d fails with %s", fc.route, k, calls, kind.name)
					t.Run(what, func(t *testing.T) {
						t.Parallel()
						cases.Add(1)
						faultCaseRun(t, template, fc, k, kind.err, before, after)
					})
				}
			}
		}
	})
	for _, rt := range routes.Table {
		if rt.Method != "GET" && !covered[rt.Method+" "+rt.Path] && !faultExempt[rt.Method+" "+rt.Path] {
			t.Errorf("write route %s %s has no fault-injection case", rt.Method, rt.Path)
		}
	}
	scope := "each position one of the 5 error kinds in turn; FAULTS=full for all"
	if fullFaults {
		scope = "write routes x DynamoDB call positions x 5 error kinds"
	}
	fmt.Printf("fault injection: %d cases (%s)\n", cases.Load(), scope)
}

// faultCaseRun sends fc's request to a copy of template whose k-th
// DynamoDB call fails with err, and checks the answer and what is stored.
func faultCaseRun(t *testing.T, template *faultWorld, fc faultCase, k int, err func() error, before, after []string) {
	w := template.clone(t)
	w.inj.reset(k, err)
	res := w.do(t, fc)
	switch {
	case res.Status/100 == 2:
	case res.Status == 503 && res.Header.Get("Retry-After") != "":
	default:
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	w.inj.reset(0, nil)
	got := w.state(t)
	if !fc.multiStep && !slices.Equal(got, before) && !slices.Equal(got, after) {
		t.Fatalf("stored state is neither before nor after:\n%s", diff(got, after))
	}
	testenv.Recount(t, w.env.Store, w.co.ID)
	if res.Status == 503 {
		if res := w.do(t, fc); res.Status/100 != 2 {
			t.Fatalf("repeated request: %d %s", res.Status, res.Body)
		}
	}
	if got := w.state(t); !slices.Equal(got, after) {
		t.Fatalf("another state than a clean run's:\n%s", diff(got, after))
	}
}

// faultExempt are write routes whose cases live elsewhere.
var faultExempt = map[string]bool{
	// Re-verifies against the source-code host (an httptest fake); its
	// revision-conditional update is one write (integrations tests).
	"PATCH /integrations/scm-provider/{integration_uuid}": true,
	// The host's signed deliveries (a body signed with a secret set up
	// per world, recent by its comment's time): its fault cases, every
	// call position of a command, are in functions/integrations.
	"POST /integrations/scm-provider/{integration_uuid}/events": true,
	// Notification delivery: each is one conditional write or one
	// transaction (functions/webhooks, functions/notifications tests);
	// fault cases for them are not written yet.
	"POST /webhooks":                                                 true,
	"PATCH /webhooks/{webhook_id}":                                   true,
	"DELETE /webhooks/{webhook_id}":                                  true,
	"POST /webhooks/{webhook_id}/rotate-secret":                      true,
	"POST /webhooks/{webhook_id}/test":                               true,
	"POST /webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": true,
	"PUT /sla-settings":                                              true,
	// Mints a random key, so no two runs store the same items; its fault
	// cases check what the key leaves behind (functions/accounts).
	"POST /api-keys": true,
	// Draws a random export id, so no two runs store the same items; its
	// one write is a transaction of the export item and its audit entry.
	"POST /exports": true,
	// Draws a random (version 7) rule id; its one write is a transaction of
	// the rule, its active entry, its count and its audit entry.
	"POST /triage-rules": true,
	// Draws a random (version 4) rule id; its one write is a transaction of
	// the rule and its audit entry.
	"POST /ticket-rules": true,
	// Checks the credentials against the Jira site over HTTP (a loopback
	// fake in functions/tickets) and draws a random integration uuid; its
	// one write is a transaction of the integration, its look-up by uuid
	// and its audit entry.
	"POST /integrations/jira": true,
	// Jira's and GitHub's signed deliveries to the tickets group (a body
	// signed with the integration's webhook secret, a delivery id against
	// replays): their tests, replays and forgeries included, are in
	// functions/tickets; fault cases for them are not written yet.
	"POST /integrations/jira/{integration_uuid}/events":                true,
	"POST /integrations/scm-provider/{integration_uuid}/ticket-events": true,
}

func (w *faultWorld) do(t *testing.T, fc faultCase) *testenv.Response {
	t.Helper()
	ct := "application/json"
	if strings.HasPrefix(fc.route, "POST /git-config-upload") {
		ct = "text/plain"
	}
	header := append(append(testenv.Key(w.co.Admin), "Content-Type", ct), fc.header...)
	return testenv.Do(t, registry.Mux(w.env.Deps), strings.Fields(fc.route)[0], fc.path(w), fc.body, header...)
}

func diff(got, want []string) string {
	var b strings.Builder
	for _, s := range got {
		if !slices.Contains(want, s) {
			fmt.Fprintf(&b, "+ %s\n", s)
		}
	}
	for _, s := range want {
		if !slices.Contains(got, s) {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	return b.String()
}
