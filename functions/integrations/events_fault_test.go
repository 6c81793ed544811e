package integrations_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/functions/integrations"
	"github.com/acme/codescan-api/internal/githost"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/prtriage"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/store/catalog"
)

// The refusals real DynamoDB gives under load and DynamoDB Local never
// does (as internal/registry's fault injection, which cannot sign a
// delivery and so leaves this route to this test).
var hookFaults = []func() error{
	func() error { return &types.ProvisionedThroughputExceededException{Message: aws.String("injected")} },
	func() error { return &smithy.GenericAPIError{Code: "ThrottlingException", Message: "injected"} },
	func() error {
		return &types.TransactionCanceledException{Message: aws.String("injected"),
			CancellationReasons: []types.CancellationReason{{Code: aws.String("TransactionConflict")}}}
	},
	func() error { return &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded} },
}

// faultAt fails the n-th DynamoDB call attempt once or, in an outage,
// every attempt from the n-th on (past every retry budget).
type faultAt struct {
	mu       sync.Mutex
	calls, n int
	outage   bool
	err      func() error
}

func (f *faultAt) add(stack *middleware.Stack) error {
	return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("inject-fault",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			f.mu.Lock()
			f.calls++
			fail := f.calls == f.n || (f.outage && f.n > 0 && f.calls >= f.n)
			f.mu.Unlock()
			if fail {
				return middleware.FinalizeOutput{}, middleware.Metadata{}, f.err()
			}
			return next.HandleFinalize(ctx, in)
		}), "Retry", middleware.After)
}

// faultCopy is a fresh table holding a copy of the world's items, served
// by its own integrations handler whose DynamoDB calls go through f.
type faultCopy struct {
	env *testenv.Env
	h   http.Handler
	f   *faultAt
	now time.Time // the handler's clock
	iam sync.Map  // the IAM actions of the calls made
}

// record notes the IAM actions that authorise each call: a transaction
// needs its items' (as scripts/lambdaevents records them).
func (c *faultCopy) record(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("record-iam",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput)
			if !ok {
				c.iam.Store("dynamodb:"+middleware.GetOperationName(ctx), true)
				return next.HandleInitialize(ctx, in)
			}
			for _, it := range tx.TransactItems {
				switch {
				case it.Put != nil:
					c.iam.Store("dynamodb:PutItem", true)
				case it.Update != nil:
					c.iam.Store("dynamodb:UpdateItem", true)
				case it.Delete != nil:
					c.iam.Store("dynamodb:DeleteItem", true)
				case it.ConditionCheck != nil:
					c.iam.Store("dynamodb:ConditionCheckItem", true)
				}
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

func (w *hookWorld) copyWithFaults(t *testing.T, items []map[string]types.AttributeValue) *faultCopy {
	t.Helper()
	env := testenv.New(t)
	for start := 0; start < len(items); start += 25 {
		var reqs []types.WriteRequest
		for _, it := range items[start:min(start+25, len(items))] {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
		res, err := env.Store.Client().BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{env.Store.TableName(): reqs}})
		if err != nil || len(res.UnprocessedItems) > 0 {
			t.Fatalf("copy: %v %v", err, res.UnprocessedItems)
		}
	}
	c := &faultCopy{env: env, f: &faultAt{}, now: time.Now()}
	env.Deps.Now = func() time.Time { return c.now }
	opts := env.Store.Client().Options()
	opts.APIOptions = append(slices.Clone(opts.APIOptions), c.f.add, c.record)
	env.Store.SetClient(dynamodb.New(opts))
	c.h = integrations.NewWithOptions(env.Deps, integrations.Options{Sealer: w.sealer,
		Host: scmhost.New(scmhost.Options{AllowLoopback: true, Timeout: 5 * time.Second})})
	return c
}

func (c *faultCopy) reset(n int, err func() error, outage bool) {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	c.f.calls, c.f.n, c.f.err, c.f.outage = 0, n, err, outage
}

func (c *faultCopy) post(t *testing.T, integrationUUID string, body []byte, h http.Header) *testenv.Response {
	t.Helper()
	var pairs []string
	for k, vs := range h {
		pairs = append(pairs, k, vs[0])
	}
	return testenv.DoBytes(t, c.h, "POST", "/integrations/scm-provider/"+integrationUUID+"/events", body, pairs...)
}

// volatileValue matches what differs between two runs of one request:
// times, inverted times in sort keys.
var volatileValue = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z|\b\d{13}\b`)

// state is every item of the copy, its times and expiries blanked, sorted.
func (c *faultCopy) state(t *testing.T) []string {
	t.Helper()
	c.reset(0, nil, false)
	var out []string
	p := dynamodb.NewScanPaginator(c.env.Store.Client(), &dynamodb.ScanInput{TableName: aws.String(c.env.Store.TableName())})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			var m map[string]any
			if err := attributevalue.UnmarshalMap(it, &m); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"lease_owner", "lease_until", "ver", "expires_at"} {
				delete(m, k)
			}
			b, _ := json.Marshal(m)
			out = append(out, volatileValue.ReplaceAllString(string(b), "<t>"))
		}
	}
	sort.Strings(out)
	return out
}

// A command delivered while DynamoDB refuses, at every call position of
// the request, one call or (an outage) every call from there on: the
// answer is 200 or 503 with Retry-After; the host's redeliveries (the
// same delivery id; after the claim's lease when the outage kept the
// claim from being given back) carry it out; the table then ends exactly
// as after one clean delivery (the issue triaged once, one history entry,
// one audit entry, the claims done) and the counters equal a recount.
func TestCommandUnderDynamoDBFaults(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	payload := w.comment(t, "Octo-Dev", "/codescan ignore "+w.refs[0]+" fault tolerant")
	body, h := githost.SignedEvent([]byte(acmeSecret), "issue_comment", payload)
	var items []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(w.env.Store.Client(), &dynamodb.ScanInput{TableName: aws.String(w.env.Store.TableName())})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, page.Items...)
	}
	clean := w.copyWithFaults(t, items)
	clean.reset(0, nil, false)
	if res := clean.post(t, w.in.UUID, body, h); !strings.Contains(string(res.Body), `"result":"triaged"`) {
		t.Fatalf("clean run: %d %s", res.Status, res.Body)
	}
	calls := clean.f.calls
	// The group's function may make every call of a command (deployspec:
	// template.yaml and the stacks grant exactly its list).
	clean.iam.Range(func(a, _ any) bool {
		if !slices.Contains(deployspec.Of(routes.GroupIntegrations).TableActions, a.(string)) {
			t.Errorf("a command calls %s, which deployspec does not grant the integrations function", a)
		}
		return true
	})
	after := clean.state(t)
	var unavailable, cases atomic.Int64
	turn := faultTurn(t)
	t.Run("positions", func(t *testing.T) {
		for k := 1; k <= calls; k++ {
			for _, outage := range []bool{false, true} {
				if !fullFaults && k != 1 && k != calls && (k+turn)%2 != boolInt(outage) {
					continue // make test: one of the two per position, in turn
				}
				t.Run(fmt.Sprintf("call %d of %d, outage %v", k, calls, outage), func(t *testing.T) {
					t.Parallel() // an outage waits out every retry budget
					cases.Add(1)
					c := w.copyWithFaults(t, items)
					// Every kind in turn, over the positions of either
					// parity too (make test's one refused call takes
					// every other position).
					kind := hookFaults[k/2%len(hookFaults)]
					if outage { // the client's retryer gives up after its budget (~2.6 s)
						kind = hookFaults[1]
					}
					c.reset(k, kind, outage)
					res := c.post(t, w.in.UUID, body, h)
					switch {
					case res.Status == http.StatusOK:
					case res.Status == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "":
						unavailable.Add(1)
					default:
						t.Fatalf("%d %s", res.Status, res.Body)
					}
					c.reset(0, nil, false)
					c.redeliver(t, w.in.UUID, body, h, after)
					if got := c.state(t); !slices.Equal(got, after) {
						t.Fatal("the table differs from a clean delivery's")
					}
					testenv.Recount(t, c.env.Store, w.acme.ID)
				})
			}
		}
	})
	if unavailable.Load() == 0 {
		t.Fatal("no fault reached the answer: the test tested nothing")
	}
	t.Logf("%d call positions of one command, %d cases, %d answers 503", calls, cases.Load(), unavailable.Load())
}

// fullFaults walks both faults (one refused call, an outage from there on)
// at every call position (`make faults` sets FAULTS=full); without it
// (make test) the first and last positions get both and every other
// position one of the two, taking turns from an offset that changes from
// run to run (FAULTS_SEED replays one), so that every position and both
// faults are covered in some 55% of the time and every pair over runs.
var fullFaults = os.Getenv("FAULTS") == "full"

// faultTurn is the run's offset (0 or 1) of the taking turns: from
// FAULTS_SEED, or the clock; a failing test names the seed to replay it.
func faultTurn(t *testing.T) int {
	t.Helper()
	seed := time.Now().UnixNano()
	if s := os.Getenv("FAULTS_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("FAULTS_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Cleanup(func() {
		if t.Failed() && !fullFaults {
			t.Logf("replay these positions with FAULTS_SEED=%d", seed)
		}
	})
	return int(seed & 1)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// redeliver sends the delivery again, as the host's redelivery does, until
// the table is the clean run's: at once, and once more past the claim's
// lease when the first found the claim still held.
func (c *faultCopy) redeliver(t *testing.T, integrationUUID string, body []byte, h http.Header, want []string) {
	t.Helper()
	for n := 0; n < 2 && !slices.Equal(c.state(t), want); n++ {
		res := c.post(t, integrationUUID, body, h)
		switch {
		case strings.Contains(string(res.Body), `"result":"duplicate"`):
			c.now = c.now.Add(catalog.SCMClaimLease + time.Second)
		case strings.Contains(string(res.Body), `"result":"`+prtriage.Triaged+`"`),
			strings.Contains(string(res.Body), `"result":"`+prtriage.Unchanged+`"`):
		default:
			t.Fatalf("redelivery: %d %s", res.Status, res.Body)
		}
	}
}
