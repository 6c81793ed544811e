package main

// The list routes' bench: GET /teams and GET /integrations/scm-provider at
// two tenant sizes, page 1, the 100th page by cursor and by number, beside
// the naive read-everything baseline; and, for GET /teams, the request's
// time against the time its DynamoDB calls take on their slowest chain.

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/functions/integrations"
	"github.com/acme/codescan-api/functions/teams"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store"
)

// listTenant is one company with size teams and size integrations.
type listTenant struct {
	size    int
	company int64
	apiKey  string
	// cursor100 is the token of the 100th page of 5, per route.
	cursor100 map[string]string
}

// listRoute is one list route of the bench.
type listRoute struct {
	name  string
	path  string
	naive func(ctx context.Context, st *store.Store, company int64) error
}

var listRoutes = []listRoute{
	{"GET /teams", "/teams", func(ctx context.Context, st *store.Store, company int64) error {
		// What the handler did before: every team, user and project.
		if _, err := st.ListTeams(ctx, company); err != nil {
			return err
		}
		if _, err := st.ListUsers(ctx, company); err != nil {
			return err
		}
		_, err := st.ListProjects(ctx, company)
		return err
	}},
	{"GET /integrations/scm-provider", "/integrations/scm-provider", func(ctx context.Context, st *store.Store, company int64) error {
		_, err := st.ListIntegrations(ctx, company)
		return err
	}},
}

// listCase is one call of a route.
type listCase struct {
	name  string
	query func(t *listTenant, route string) string
}

var listCases = []listCase{
	{"page 1 of 20", func(*listTenant, string) string { return "?page_size=20" }},
	{"page 100 of 5, by cursor", func(t *listTenant, route string) string {
		return "?page_size=5&next_page_token=" + t.cursor100[route]
	}},
	{"page 100 of 5, by number", func(*listTenant, string) string { return "?page=100&page_size=5" }},
}

// timeline collects the intervals of one request's DynamoDB calls.
type timeline struct {
	mu    sync.Mutex
	spans [][2]time.Time
}

type timelineKey struct{}

// timeCalls is an SDK middleware that adds every DynamoDB call of a
// context carrying a timeline to it.
func timeCalls(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("benchTimeline",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			start := time.Now()
			out, md, err := next.HandleInitialize(ctx, in)
			if tl, ok := ctx.Value(timelineKey{}).(*timeline); ok {
				tl.mu.Lock()
				tl.spans = append(tl.spans, [2]time.Time{start, time.Now()})
				tl.mu.Unlock()
			}
			return out, md, err
		}), middleware.Before)
}

// chain is the time during which at least one DynamoDB call was under
// way: the slowest chain of the request's calls, concurrent ones counted
// once.
func (tl *timeline) chain() time.Duration {
	spans := slices.Clone(tl.spans)
	slices.SortFunc(spans, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	var busy time.Duration
	var end time.Time
	for _, s := range spans {
		switch {
		case s[0].After(end):
			busy += s[1].Sub(s[0])
			end = s[1]
		case s[1].After(end):
			busy += s[1].Sub(end)
			end = s[1]
		}
	}
	return busy
}

func runLists(ctx context.Context, db *dynamodb.Client, small, large, iterations, naiveIterations, workers int) error {
	db = dynamodb.New(db.Options(), func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, timeCalls) })
	st := store.New(db, fmt.Sprintf("bench_lists_%d", time.Now().UnixNano()))
	if err := st.CreateTable(ctx, false); err != nil {
		return err
	}
	sealKey := make([]byte, 32)
	_, _ = rand.Read(sealKey)
	sealer, err := secrets.NewLocal(sealKey)
	if err != nil {
		return err
	}
	// The rate limit is on (with limits no run reaches), so each request
	// makes the same calls as in AWS: key, user, rate-limit window, reads.
	srv := &httpapi.Server{Auth: auth.New(st, auth.JWTConfig{}), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		RateLimit: &httpapi.RateLimiter{Store: st, Limit: store.RateLimit{PerMinute: 1 << 30, PerHour: 1 << 30}}}
	deps := config.Deps{Server: srv, Store: st}
	h := map[string]http.Handler{
		"/teams": teams.New(deps),
		"/integrations/scm-provider": integrations.NewWithOptions(deps, integrations.Options{
			Sealer: sealer, Host: scmhost.New(scmhost.Options{})}),
	}
	var tenants []*listTenant
	for n, size := range []int{small, large} {
		t, err := loadLists(ctx, st, n, size, workers)
		if err != nil {
			return err
		}
		for _, r := range listRoutes {
			if t.cursor100[r.path], err = walkTo100(ctx, h[r.path], t, r.path); err != nil {
				return err
			}
		}
		tenants = append(tenants, t)
	}

	fmt.Printf("\nMeasuring the list routes, %d calls per case and size (after 3 warm-up calls), alternating sizes...\n", iterations)
	type key struct{ route, c, t int }
	results := map[key][]sample{}
	var ratios []float64 // GET /teams page 1: request time / DynamoDB chain
	for it := -3; it < iterations; it++ {
		for r, route := range listRoutes {
			for c, lc := range listCases {
				for n, t := range tenants {
					tl := &timeline{}
					s, err := call(context.WithValue(ctx, timelineKey{}, tl), h[route.path], t.apiKey, routes.BasePath+route.path+lc.query(t, route.path))
					if err != nil {
						return err
					}
					if it >= 0 {
						results[key{r, c, n}] = append(results[key{r, c, n}], s)
						if r == 0 && c == 0 {
							ratios = append(ratios, float64(s.latency)/float64(tl.chain()))
						}
					}
				}
			}
		}
	}
	naive := map[key][]sample{}
	for r, route := range listRoutes {
		for n, t := range tenants {
			for range naiveIterations {
				m := &store.Meter{}
				start := time.Now()
				if err := route.naive(store.WithMeter(ctx, m), st, t.company); err != nil {
					return err
				}
				calls, rcu, _ := m.Snapshot()
				naive[key{r, 0, n}] = append(naive[key{r, 0, n}], sample{latency: time.Since(start), rcu: rcu, calls: calls})
			}
		}
	}

	fmt.Printf("\n| route | call | p50 ms @%d | p95 ms @%d | RCU @%d | p50 ms @%d | p95 ms @%d | RCU @%d | p95 ratio | RCU ratio |\n",
		small, small, small, large, large, large)
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	row := func(route, name string, a, b []sample) {
		fmt.Printf("| %s | %s | %s | %s | %.1f | %s | %s | %.1f | %.2f | %.2f |\n", route, name,
			ms(percentile(a, .5)), ms(percentile(a, .95)), meanRCU(a),
			ms(percentile(b, .5)), ms(percentile(b, .95)), meanRCU(b),
			float64(percentile(b, .95))/float64(percentile(a, .95)), meanRCU(b)/meanRCU(a))
	}
	for r, route := range listRoutes {
		for c, lc := range listCases {
			row(route.name, lc.name, results[key{r, c, 0}], results[key{r, c, 1}])
		}
		row(route.name, "naive: read everything", naive[key{r, 0, 0}], naive[key{r, 0, 1}])
	}
	slices.Sort(ratios)
	fmt.Printf("\nRCU is consumed read capacity per call, authentication included; ratio = @%d / @%d.\n", large, small)
	fmt.Printf("GET /teams page 1, request time / its DynamoDB calls' slowest chain: p50 %.2f, p95 %.2f (%d calls).\n",
		ratios[len(ratios)/2], ratios[min(len(ratios)-1, len(ratios)*95/100)], len(ratios))
	return nil
}

// loadLists creates a company with an admin API key, 50 users, 20 projects,
// and size teams (3 members each, every tenth with project selectors) and
// size integrations.
func loadLists(ctx context.Context, st *store.Store, n, size, workers int) (*listTenant, error) {
	id, err := st.NextID(ctx, "company")
	if err != nil {
		return nil, err
	}
	if err := st.PutCompany(ctx, store.Company{ID: id, Name: fmt.Sprintf("Lists %d", size)}); err != nil {
		return nil, err
	}
	var users []int64
	for k := range 50 {
		uid, err := st.NextID(ctx, "user")
		if err != nil {
			return nil, err
		}
		u := store.User{ID: uid, CompanyID: id, Email: fmt.Sprintf("u%d-%d@lists.test", k, n), FirstName: "U", LastName: fmt.Sprint(k), Active: true, IsAdmin: k == 0}
		if err := st.PutUser(ctx, u); err != nil {
			return nil, err
		}
		users = append(users, uid)
	}
	t := &listTenant{size: size, company: id, apiKey: auth.NewAPIKey(), cursor100: map[string]string{}}
	if err := st.PutAPIKey(ctx, id, users[0], t.apiKey); err != nil {
		return nil, err
	}
	for k := range 20 {
		p := store.Project{CompanyID: id, Name: fmt.Sprintf("svc-%02d", k), RepoURL: fmt.Sprintf("https://github.com/lists/svc-%02d", k)}
		if k%2 == 0 {
			p.Tags = []string{"backend"}
		}
		if _, err := st.CreateProject(ctx, p); err != nil {
			return nil, err
		}
	}
	ts := make([]store.Team, size)
	ins := make([]store.Integration, size)
	for k := range size {
		ts[k] = store.Team{Name: fmt.Sprintf("team-%06d", k), MemberIDs: []int64{users[k%50], users[(k+1)%50], users[(k+7)%50]}}
		if k%10 == 0 {
			ts[k].ProjectTags, ts[k].RepoURLPatterns = []string{"backend"}, []string{"svc-1"}
		}
		ins[k] = store.Integration{UUID: store.NewIntegrationUUID(), Name: fmt.Sprintf("gh-%06d", k), AccountID: fmt.Sprint(k),
			AccountName: "bot", BaseURL: "https://api.github.com", SealedToken: "not-a-real-sealed-token-but-of-a-realistic-length-0123456789abcdef"}
	}
	fmt.Printf("loading %d teams and %d integrations...\n", size, size)
	if _, err := st.BulkLoadTeams(ctx, id, ts, workers, nil); err != nil {
		return nil, err
	}
	if _, err := st.BulkLoadIntegrations(ctx, id, ins, workers, nil); err != nil {
		return nil, err
	}
	return t, nil
}

// walkTo100 follows next_page_token from page 1 (of 5) and returns the token
// of page 100.
func walkTo100(ctx context.Context, h http.Handler, t *listTenant, path string) (string, error) {
	token := ""
	for page := 1; page < 100; page++ {
		req := httptest.NewRequestWithContext(ctx, "GET", routes.BasePath+path+"?page_size=5&next_page_token="+token, nil)
		req.Header.Set(auth.APIKeyHeader, t.apiKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var body struct {
			Next string `json:"next_page_token"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 || body.Next == "" {
			return "", fmt.Errorf("%s page %d of 5 at %d items: %d %s", path, page, t.size, rec.Code, rec.Body)
		}
		token = body.Next
	}
	return token, nil
}
