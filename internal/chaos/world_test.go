package chaos

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

// world is one seed's company, on a table of its own, with its clock.
//
// A table per seed, not one for all: the scheduler's SLA job walks every
// company of the table, so with one table a seed's run (and its replay
// with -chaos.seed) would depend on the seeds before it; the table is
// deleted when the seed ends, so a 30-minute run does not pile tables up
// in DynamoDB Local.
type world struct {
	t    *testing.T
	seed uint64
	rng  *rand.Rand
	// clock is the store's, the handlers' and the workers' time (unix
	// nanoseconds): tests move it, nothing sleeps.
	clock atomic.Int64
	env   *testenv.Env
	st    *store.Store
	h     http.Handler
	co    *testenv.Company
	log   *slog.Logger

	projects []string           // project names
	projIDs  map[string]int64   // by name, once uploaded to
	branches []string           // branch names, shared by both projects
	uploads  []*upload          // every upload, for re-uploads
	pending  []*upload          // uploads whose ingester was killed, not resumed yet
	heads    map[string]*upload // each branch's newest complete scan (its truth), by branchKey
	rules    []rule             // triage rules the seed created
	step     int
	// counts counts what the seed did (steps, kills by worker and mode),
	// logged at its end: which seeds cover what.
	counts map[string]int
	trail  []string // what each step did, shown when the seed fails
}

func newWorld(t *testing.T, seed uint64) *world {
	t.Helper()
	w := &world{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), projIDs: map[string]int64{}, counts: map[string]int{}, heads: map[string]*upload{},
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	// Today at 09:00 UTC: near the wall clock, so that nothing stored
	// looks long expired to DynamoDB Local or the S3 server.
	w.clock.Store(time.Now().UTC().Truncate(24 * time.Hour).Add(9 * time.Hour).UnixNano())
	w.env = testenv.New(t)
	t.Cleanup(func() {
		_, _ = w.env.Store.Client().DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(w.env.Store.TableName())})
	})
	w.st = store.New(w.env.Store.Client(), w.env.Store.TableName(), store.WithClock(w.now))
	w.env.Store, w.env.Deps.Store, w.env.Deps.Now = w.st, w.st, w.now
	w.h = registry.Mux(w.env.Deps)
	w.co = w.env.Company(t, fmt.Sprintf("Chaos%d", seed))
	w.projects = []string{"alpha", "beta"}
	w.branches = []string{"main", "dev", "release"}[:2+w.rng.IntN(2)]
	return w
}

func (w *world) now() time.Time { return time.Unix(0, w.clock.Load()).UTC() }

// advance moves the clock on by d.
func (w *world) advance(d time.Duration) { w.clock.Add(int64(d)) }

// fatalf fails the seed, naming it, the step and how to replay it.
func (w *world) fatalf(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("seed %d step %d: %s\n(replay: -chaos.seed=%d)", w.seed, w.step, fmt.Sprintf(format, args...), w.seed)
}

// note records what a step did, for the trail a failure shows.
func (w *world) note(format string, args ...any) {
	w.trail = append(w.trail, fmt.Sprintf("%3d %s", w.step, fmt.Sprintf(format, args...)))
}

// do sends a request as the company's admin through the whole API (as
// the dev server mounts it; every answer checked against the OpenAPI
// document).
func (w *world) do(method, path, contentType string, body []byte) *testenv.Response {
	w.t.Helper()
	header := testenv.Key(w.co.Admin)
	if contentType != "" {
		header = append(header, "Content-Type", contentType)
	}
	return testenv.DoBytes(w.t, w.h, method, path, body, header...)
}

// doOK is do that must answer want.
func (w *world) doOK(want int, method, path, contentType string, body []byte) *testenv.Response {
	w.t.Helper()
	res := w.do(method, path, contentType, body)
	if res.Status != want {
		logs := ""
		if res.Status >= 500 { // the server's log says why
			logs = w.env.Logs.String()
			logs = "\nserver log: " + logs[max(0, len(logs)-3000):]
		}
		w.fatalf("%s %s: %d, want %d: %s%s", method, path, res.Status, want, res.Body, logs)
	}
	return res
}

// issues reads every issue of the company, by id: the items EachIssue
// reads (its 256 shard partitions), found by one scan of the seed's own
// table, which takes a few calls where the 256 queries take hundreds; the
// checks read all issues several times a step.
func (w *world) issues() map[string]findings.Issue {
	w.t.Helper()
	out := map[string]findings.Issue{}
	prefix := schema.IssueShardPK(w.co.ID, "")
	p := dynamodb.NewScanPaginator(w.st.Client(), &dynamodb.ScanInput{TableName: aws.String(w.st.TableName()), ConsistentRead: aws.Bool(true),
		FilterExpression: aws.String("begins_with(PK, :p)"), ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: prefix}}})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			w.fatalf("read issues: %v", err)
		}
		for _, item := range page.Items {
			var i findings.Issue
			if err := attributevalue.UnmarshalMap(item, &i); err != nil {
				w.fatalf("read issues: %v", err)
			}
			out[i.ID] = i
		}
	}
	return out
}

// triageView is what a triage may change of an issue: the fields whose
// change counts as a change in every triage's answer.
func triageView(i findings.Issue) string {
	return fmt.Sprintf("%s|%s|%s|%d|%d|%s|%s|%+v", i.Status, i.Reason, i.ExpiresAt, i.Owner, i.AssignedTo, i.Urgency, i.UrgencyRuleID, i.Decision)
}

// changed counts the issues whose triage view differs between two reads.
func changed(before, after map[string]findings.Issue) (n int, ids []string) {
	for id, a := range after {
		if b, ok := before[id]; ok && triageView(a) != triageView(b) {
			n++
			ids = append(ids, id)
		}
	}
	return n, ids
}

// pick is one element of xs at random.
func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// newUUID is a random (version 4) uuid drawn from the seed, so that a
// replay sends the same run ids.
func (w *world) newUUID() string {
	a, b := w.rng.Uint64(), w.rng.Uint64()
	a = a&^(0xf<<12) | 0x4<<12
	b = b&^(0x3<<62) | 0x2<<62
	s := fmt.Sprintf("%016x%016x", a, b)
	return strings.Join([]string{s[:8], s[8:12], s[12:16], s[16:20], s[20:]}, "-")
}
