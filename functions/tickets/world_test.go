package tickets_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/tickets"
	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/internal/trackerhost"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	ticketing "github.com/acme/codescan-api/shared/tickets"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	jiraEmail   = "bot@acme.test"
	jiraToken   = "jira-api-token"
	jiraProject = "SEC"
	jiraSecret  = "jira-webhook-secret-0123456789"
)

// clock is the test's controlled time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// world is a company with the tickets group, the other groups, a
// controlled clock and the delivery engine with the tickets channel.
type world struct {
	env      *testenv.Env
	mux      http.Handler // every group (registry)
	h        http.Handler // the tickets group, loopback allowed
	acme     *testenv.Company
	key      []string
	sealer   secrets.Sealer
	clock    *clock
	area     *storetickets.Tickets
	ticketer *ticketing.Ticketer
	engine   *deliveryengine.Engine
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := testenv.New(t)
	c := &clock{t: time.Now().UTC().Truncate(time.Second)}
	env.Deps.Now = c.Now
	w := &world{env: env, mux: registry.Mux(env.Deps), sealer: testenv.Sealer(t), clock: c}
	w.h = tickets.NewWithOptions(env.Deps, tickets.Options{Sealer: w.sealer, AllowLoopback: true, Timeout: 5 * time.Second})
	w.acme = env.Company(t, "Acme")
	w.key = testenv.Key(w.acme.Admin)
	w.area = storetickets.New(env.Store.Client(), env.Store.TableName(), c.Now)
	w.ticketer = &ticketing.Ticketer{Store: ticketing.StoreOf(env.Store), Tickets: w.area, Sealer: w.sealer, Now: c.Now,
		Host: scmhost.New(scmhost.Options{AllowLoopback: true, Timeout: 5 * time.Second}),
		Jira: ticketing.NewJiraHTTP(5*time.Second, true)}
	w.engine = &deliveryengine.Engine{Store: deliveryengine.StoreOf(env.Store), Sealer: w.sealer, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Backoff:  deliveryengine.Backoff{Base: time.Second, Max: time.Minute, Horizon: 24 * time.Hour},
		Outbound: []outbound.Channel{w.ticketer}, Now: c.Now}
	return w
}

// jiraIntegration connects the company to site through the route and
// returns its uuid.
func (w *world) jiraIntegration(t *testing.T, site *trackerhost.Jira) string {
	t.Helper()
	body := fmt.Sprintf(`{"site_url":%q,"email":%q,"api_token":%q,"project_key":%q,"issue_type":"Bug","webhook_secret":%q}`,
		site.URL(), jiraEmail, jiraToken, jiraProject, jiraSecret)
	res := testenv.Do(t, w.h, "POST", "/integrations/jira", body, w.key...)
	if res.Status != http.StatusCreated {
		t.Fatalf("jira integration: %d %s", res.Status, res.Body)
	}
	var out struct {
		Integration struct {
			UUID string `json:"uuid"`
		} `json:"integration"`
	}
	res.Decode(t, &out)
	return out.Integration.UUID
}

// rule creates a ticket rule through the route and returns its id.
func (w *world) rule(t *testing.T, body string) string {
	t.Helper()
	res := testenv.Do(t, w.h, "POST", "/ticket-rules", body, w.key...)
	if res.Status != http.StatusCreated {
		t.Fatalf("ticket rule: %d %s", res.Status, res.Body)
	}
	var out struct {
		Rule struct {
			ID string `json:"id"`
		} `json:"rule"`
	}
	res.Decode(t, &out)
	return out.Rule.ID
}

// cwes are the CWEs of the test's report, one Semgrep rule each.
var cwes = []int{22, 78, 79, 89, 502, 918}

// report is a Semgrep SARIF report of n findings spread over the CWEs
// (finding k is of cwes[k % len], in its own file), skipping the CWEs of
// drop.
func report(n int, drop ...int) string {
	var rules, results []string
	for _, c := range cwes {
		rules = append(rules, fmt.Sprintf(`{"id":"rule-%d","shortDescription":{"text":"CWE-%d"},"properties":{"security-severity":"8.1","tags":["CWE-%d"]}}`, c, c, c))
	}
	for k := 0; k < n; k++ {
		c := cwes[k%len(cwes)]
		if contains(drop, c) {
			continue
		}
		results = append(results, fmt.Sprintf(`{"ruleId":"rule-%d","message":{"text":"Finding %d"},`+
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/f%03d.py"},"region":{"startLine":%d}}}]}`, c, k, k, 10+k%7))
	}
	return `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"Semgrep OSS","rules":[` + strings.Join(rules, ",") +
		`]}},"results":[` + strings.Join(results, ",") + `]}]}`
}

func contains(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// scan uploads a report to project payments' main branch, ingests it and
// returns the scan's id.
func (w *world) scan(t *testing.T, rep string) string {
	t.Helper()
	res := testenv.Do(t, w.mux, "POST", "/scan-upload?engine=sarif&project=payments&branch=main&run_id="+uuid.NewString(), rep, w.key...)
	var up struct {
		ScanID string `json:"sast_scan_id"`
	}
	res.Decode(t, &up)
	if res.Status != 200 || up.ScanID == "" {
		t.Fatalf("upload: %d %s", res.Status, res.Body)
	}
	w.env.Ingest(t, w.acme.ID, up.ScanID)
	return up.ScanID
}

// dispatch hands the scan's completion to the engine.
func (w *world) dispatch(t *testing.T, scanID string) {
	t.Helper()
	ev := schema.Event{ID: "scan_completed-" + scanID, CompanyID: w.acme.ID, Type: "scan_completed", CreatedAt: w.clock.Now(),
		Data: []byte(fmt.Sprintf(`{"scan_id":%q}`, scanID))}
	if failed := w.engine.Dispatch(context.Background(), []schema.Event{ev}); len(failed) > 0 {
		t.Fatalf("dispatch: %v", failed)
	}
}

// retry runs the engine's due retries after the back-off (and a lease) ran out.
func (w *world) retry(t *testing.T) int {
	t.Helper()
	w.clock.Add(2 * time.Minute)
	n, err := w.engine.RunDue(context.Background())
	if err != nil {
		t.Fatalf("retries: %v", err)
	}
	return n
}

// links are the company's ticket links.
func (w *world) links(t *testing.T) []schema.TicketLink {
	t.Helper()
	l, err := w.area.Links(context.Background(), w.acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// total is GET /issues's total_issues for a query.
func (w *world) total(t *testing.T, query string) int {
	t.Helper()
	res := testenv.Do(t, w.mux, "GET", "/issues?"+query, "", w.key...)
	if res.Status != 200 {
		t.Fatalf("issues?%s: %d %s", query, res.Status, res.Body)
	}
	var out struct {
		Total int `json:"total_issues"`
	}
	res.Decode(t, &out)
	return out.Total
}

// postSigned sends a tracker's delivery to path, signed with secret.
func (w *world) postSigned(t *testing.T, path, sigHeader, secret, idHeader, id string, body []byte, extra ...string) *testenv.Response {
	t.Helper()
	h := append([]string{sigHeader, trackerhost.Sign(secret, body), idHeader, id, "Content-Type", "application/json"}, extra...)
	return testenv.DoBytes(t, w.h, "POST", path, body, h...)
}
