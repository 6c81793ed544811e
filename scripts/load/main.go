// Command load runs N concurrent clients for a bounded time against the
// whole API (every group's handler, as the dev server mounts them, on a
// loopback port) on DynamoDB Local (the one DYNAMODB_ENDPOINT names; `make
// load` starts it), with the rate limit off, in one company: SARIF uploads
// into one project and branch, triage of its issues, team creation, and
// reads. It prints requests/s, p50/p95/p99 per route, the 5xx and 429
// counts, and recounts every group counter from the issues. It exits 1 on
// any 5xx or a counter that differs from the recount.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/ingester"
	"github.com/acme/codescan-api/internal/localstream"
	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/recount"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

func main() {
	clients := flag.Int("clients", envInt("LOAD_CLIENTS", 16), "concurrent clients (env LOAD_CLIENTS)")
	seconds := flag.Int("seconds", envInt("LOAD_SECONDS", 40), "duration in seconds (env LOAD_SECONDS)")
	flag.Parse()
	if err := run(*clients, time.Duration(*seconds)*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// pool are the findings uploads draw from: each upload reports a random
// part of them, so issues are created, fixed and reopened all the time.
var pool = func() []string {
	var out []string
	for k := range 30 {
		out = append(out, fmt.Sprintf(`{"ruleId":"R%d","message":{"text":"finding %d"},"properties":{"tags":["CWE-%d"]},`+
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/f%d.go"},"region":{"startLine":%d}}}]}`,
			k%7, k, []int{79, 89, 22, 798, 502}[k%5], k%9, 1+k))
	}
	return out
}()

func report(r *rand.Rand) []byte {
	var picked []string
	for _, f := range pool {
		if r.IntN(3) > 0 {
			picked = append(picked, f)
		}
	}
	return []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"loadscan"}},"results":[` + strings.Join(picked, ",") + `]}]}`)
}

// op is one kind of request a client sends.
type op struct {
	name   string
	weight int
	do     func(c *client) (*http.Request, error)
}

type client struct {
	base, key string
	r         *rand.Rand
	issues    *issueIDs
}

// issueIDs are the issue ids seen so far, for triage.
type issueIDs struct {
	mu  sync.Mutex
	ids []string
}

func (s *issueIDs) add(ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if !slices.Contains(s.ids, id) {
			s.ids = append(s.ids, id)
		}
	}
}

func (s *issueIDs) pick(r *rand.Rand) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) == 0 {
		return ""
	}
	return s.ids[r.IntN(len(s.ids))]
}

func (c *client) req(method, path string, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set(auth.APIKeyHeader, c.key)
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

var ops = []op{
	{"POST /scan-upload", 35, func(c *client) (*http.Request, error) {
		return c.req("POST", "/scan-upload?engine=sarif&project=load&branch=main&run_id="+uuid.NewString(), report(c.r))
	}},
	{"PATCH /issue/{id}", 15, func(c *client) (*http.Request, error) {
		id := c.issues.pick(c.r)
		if id == "" {
			return nil, nil
		}
		status := []string{"open", "false_positive", "accepted_risk", "fix_in_progress", "duplicate"}[c.r.IntN(5)]
		return c.req("PATCH", "/issue/"+id, []byte(`{"status":"`+status+`"}`))
	}},
	{"POST /teams", 10, func(c *client) (*http.Request, error) {
		return c.req("POST", "/teams", []byte(`{"name":"team `+uuid.NewString()[:13]+`"}`))
	}},
	{"GET /issues/groups", 15, func(c *client) (*http.Request, error) {
		return c.req("GET", "/issues/groups?project=load&breakdown=true", nil)
	}},
	{"GET /issues", 15, func(c *client) (*http.Request, error) {
		return c.req("GET", "/issues?project=load&page_size=50", nil)
	}},
	{"GET /teams", 10, func(c *client) (*http.Request, error) { return c.req("GET", "/teams?page_size=20", nil) }},
}

// result is one answered request.
type result struct {
	op     string
	status int
	took   time.Duration
}

// run drives clients against the API for d, then waits for the uploads'
// ingestion and checks the counters against a recount; it fails when an
// answer was a 5xx.
func run(clients int, d time.Duration) error {
	ctx := context.Background()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		return errors.New("DYNAMODB_ENDPOINT is unset (run it with `make load`)")
	}
	db, err := config.NewDynamoDB(ctx, endpoint)
	if err != nil {
		return err
	}
	st := store.New(db, fmt.Sprintf("load_%d", time.Now().UnixNano()))
	// The stream feeds the ingester, as in the dev server: uploads answer
	// at once and the worker writes their findings meanwhile.
	if err := bulkload.CreateTable(ctx, st, true); err != nil {
		return err
	}
	company, key, err := tenant(ctx, st)
	if err != nil {
		return err
	}
	pollCtx, stopPoller := context.WithCancel(ctx)
	defer stopPoller()
	hs, base, err := serveAPI(ctx, pollCtx, st, endpoint)
	if err != nil {
		return err
	}
	defer hs.Close()

	fmt.Printf("load: %d clients for %s against %s (rate limit off)\n", clients, d, base)
	all := drive(base, key, clients, d)
	bad := summarize(all, d)
	if err := ingested(ctx, st, company, 10*time.Minute); err != nil {
		return err
	}
	if err := recount.Check(ctx, recount.StoreOf(st), company); err != nil {
		return fmt.Errorf("counters differ from a recount: %w", err)
	}
	fmt.Println("recount: every group counter equals a recount from the issues")
	if bad > 0 {
		return fmt.Errorf("%d answers were 5xx", bad)
	}
	return nil
}

// serveAPI serves the API over st on a free local port, with the ingester
// on the table's stream (through the local poller, until pollCtx ends); it
// returns the server (to close) and the API's base URL.
func serveAPI(ctx, pollCtx context.Context, st *store.Store, endpoint string) (*http.Server, string, error) {
	srv := &httpapi.Server{Auth: auth.New(st.Tenancy, auth.JWTConfig{}), Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	bucket, err := s3reports.FromEnv(ctx)
	if err != nil {
		return nil, "", err
	}
	streams, err := localstream.NewClient(ctx, endpoint)
	if err != nil {
		return nil, "", err
	}
	in := &ingester.Ingester{Store: ingester.StoreOf(st), Reports: bucket, Log: srv.Log}
	go func() {
		_ = (&localstream.Poller{DB: st.Client(), Table: st.TableName(), Log: srv.Log, Streams: streams, Consumers: []localstream.Consumer{in.HandleImage}}).Run(pollCtx)
	}()
	hs := &http.Server{Handler: registry.Mux(config.Deps{Server: srv, Store: st, Reports: bucket}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return hs, "http://" + ln.Addr().String() + routes.BasePath, nil
}

// drive runs the clients against base until d has passed and returns
// every answer's result.
func drive(base, key string, clients int, d time.Duration) []result {
	results := make(chan result, 1024)
	var all []result
	collected := make(chan struct{})
	go func() {
		for r := range results {
			all = append(all, r)
		}
		close(collected)
	}()
	seen := &issueIDs{}
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	httpc := &http.Client{Timeout: 60 * time.Second}
	for n := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &client{base: base, key: key, r: rand.New(rand.NewPCG(uint64(n), 7)), issues: seen}
			c.until(deadline, httpc, results)
		}()
	}
	wg.Wait()
	close(results)
	<-collected
	return all
}

// until sends the client's random operations until deadline, each
// answer's result to results; the issue ids GET /issues lists join the
// ids the clients pick from.
func (c *client) until(deadline time.Time, httpc *http.Client, results chan<- result) {
	for time.Now().Before(deadline) {
		o := pickOp(c.r)
		req, err := o.do(c)
		if err != nil || req == nil {
			continue
		}
		start := time.Now()
		res, err := httpc.Do(req)
		if err != nil {
			results <- result{op: o.name, status: 599, took: time.Since(start)}
			continue
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		results <- result{op: o.name, status: res.StatusCode, took: time.Since(start)}
		if o.name == "GET /issues" {
			c.issues.add(ids(body))
		}
	}
}

func pickOp(r *rand.Rand) op {
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	n := r.IntN(total)
	for _, o := range ops {
		if n < o.weight {
			return o
		}
		n -= o.weight
	}
	return ops[0]
}

func ids(body []byte) []string {
	var page struct {
		Issues []struct {
			ID string `json:"id"`
		} `json:"issues"`
	}
	_ = json.Unmarshal(body, &page)
	var out []string
	for _, i := range page.Issues {
		out = append(out, i.ID)
	}
	return out
}

// tenant creates the company and an admin with an API key.
func tenant(ctx context.Context, st *store.Store) (int64, string, error) {
	id, err := st.Ledger.NextID(ctx, "company")
	if err != nil {
		return 0, "", err
	}
	if err := bulkload.PutCompany(ctx, st, schema.Company{ID: id, Name: "Load"}); err != nil {
		return 0, "", err
	}
	uid, err := st.Ledger.NextID(ctx, "user")
	if err != nil {
		return 0, "", err
	}
	if err := bulkload.PutUser(ctx, st, schema.User{ID: uid, CompanyID: id, Email: "load@load.test", FirstName: "Load", LastName: "Runner",
		IsAdmin: true, Active: true}); err != nil {
		return 0, "", err
	}
	key := auth.NewAPIKey()
	return id, key, bulkload.PutAPIKey(ctx, st, id, uid, key)
}

// summarize prints the figures per route and returns the number of 5xx.
func summarize(all []result, d time.Duration) int {
	byOp := map[string][]result{}
	for _, r := range all {
		byOp[r.op] = append(byOp[r.op], r)
	}
	fmt.Printf("\n%d requests in %s: %.1f requests/s\n\n", len(all), d, float64(len(all))/d.Seconds())
	fmt.Println("| route | requests | p50 ms | p95 ms | p99 ms | 2xx | 4xx | 429 | 5xx |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	bad := 0
	for _, o := range ops {
		rs := byOp[o.name]
		if len(rs) == 0 {
			continue
		}
		var took []time.Duration
		var ok, client, limited, server int
		for _, r := range rs {
			took = append(took, r.took)
			switch {
			case r.status/100 == 2:
				ok++
			case r.status == 429:
				limited++
			case r.status/100 == 4:
				client++
			default:
				server++
			}
		}
		slices.Sort(took)
		q := func(p float64) float64 { return float64(took[int(p*float64(len(took)-1))].Microseconds()) / 1000 }
		fmt.Printf("| %s | %d | %.1f | %.1f | %.1f | %d | %d | %d | %d |\n", o.name, len(rs), q(0.5), q(0.95), q(0.99), ok, client, limited, server)
		bad += server
	}
	return bad
}

// ingested waits until the ingester has ended every scan of the load's
// project (none is processing any more).
func ingested(ctx context.Context, st *store.Store, company int64, limit time.Duration) error {
	proj, err := st.Catalog.ProjectByName(ctx, company, "load")
	if errors.Is(err, ddb.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	start := time.Now()
	for {
		page, err := st.Scans.ListScans(ctx, company, scans.ScanQuery{ProjectID: proj.ID, Status: scans.ScanProcessing}, storepage.Request{Limit: 1})
		if err != nil {
			return err
		}
		if len(page.Items) == 0 {
			fmt.Printf("ingestion: every upload ingested %s after the load\n", time.Since(start).Round(time.Second))
			return nil
		}
		if time.Since(start) > limit {
			return fmt.Errorf("scans still processing %s after the load", limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
