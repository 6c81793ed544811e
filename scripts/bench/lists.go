package main

// The list routes' bench: every list route of the route table at two
// tenant sizes (each list's items in a company of its own, see
// listload.go), page 1, the 100th page by cursor and by number where the
// route takes them, beside the naive read-everything baseline; and, for GET /teams, the request's
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
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/functions/accounts"
	"github.com/acme/codescan-api/functions/integrations"
	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/functions/policies"
	"github.com/acme/codescan-api/functions/projects"
	"github.com/acme/codescan-api/functions/teams"
	"github.com/acme/codescan-api/functions/webhooks"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/findings"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// listRoute is one list route of the bench.
type listRoute struct {
	name    string
	handler string // key of the handlers map
	loader  string // key of loaders: routes with the same loader share its tenants
	path    func(t *listTenant) string
	// cursor is the query parameter that takes a next_page_token ("" when
	// the route pages by number only); numbers tells whether it takes
	// page=N.
	cursor  string
	numbers bool
	// naive reads the whole list (nil when the route reads it all anyway).
	naive func(ctx context.Context, st *store.Store, t *listTenant) error
}

func fixed(p string) func(*listTenant) string { return func(*listTenant) string { return p } }

// drain calls page with each next token until it returns "".
func drain(page func(token string) (string, error)) error {
	token := ""
	for {
		next, err := page(token)
		if err != nil || next == "" {
			return err
		}
		token = next
	}
}

var listRoutes = []listRoute{
	{"GET /teams", "teams", "teams", fixed("/teams"), "next_page_token", true, func(ctx context.Context, st *store.Store, t *listTenant) error {
		// What the handler did before: every team, user and project.
		if _, err := st.Catalog.AllTeams(ctx, t.company); err != nil {
			return err
		}
		if _, err := st.Tenancy.AllUsers(ctx, t.company); err != nil {
			return err
		}
		_, err := st.Catalog.AllProjects(ctx, t.company)
		return err
	}},
	{"GET /integrations/scm-provider", "integrations", "integrations", fixed("/integrations/scm-provider"), "next_page_token", true, func(ctx context.Context, st *store.Store, t *listTenant) error {
		_, err := st.Catalog.AllIntegrations(ctx, t.company)
		return err
	}},
	{"GET /webhooks", "webhooks", "webhooks", fixed("/webhooks"), "next_page_token", false, func(ctx context.Context, st *store.Store, t *listTenant) error {
		_, err := st.Deliveries.AllWebhooks(ctx, t.company)
		return err
	}},
	{"GET /webhooks/{webhook_id}/deliveries", "webhooks", "webhooks", func(t *listTenant) string { return "/webhooks/" + t.webhookID + "/deliveries" },
		"next_page_token", false, func(ctx context.Context, st *store.Store, t *listTenant) error {
			return drain(func(token string) (string, error) {
				resPage, err := st.Deliveries.ListAttempts(ctx, t.company, t.webhookID, "", storepage.Request{Limit: 100, Token: token})
				res := resPage
				return res.Next, err
			})
		}},
	{"GET /api-keys", "accounts", "keys", fixed("/api-keys"), "next_page_token", true, func(ctx context.Context, st *store.Store, t *listTenant) error {
		return drain(func(token string) (string, error) {
			resPage, err := st.Tenancy.ListAPIKeys(ctx, t.company, 0, storepage.Request{Limit: 100, Token: token})
			res := resPage
			return res.Next, err
		})
	}},
	{"GET /audit-log", "accounts", "keys", fixed("/audit-log"), "next_page_token", true, func(ctx context.Context, st *store.Store, t *listTenant) error {
		return drain(func(token string) (string, error) {
			resPage, err := st.Tenancy.ListAudit(ctx, t.company, tenancy.AuditFilter{}, storepage.Request{Limit: 100, Token: token})
			res := resPage
			return res.Next, err
		})
	}},
	{"GET /users", "accounts", "users", fixed("/users"), "next_page_token", true, func(ctx context.Context, st *store.Store, t *listTenant) error {
		_, err := st.Tenancy.AllUsers(ctx, t.company)
		return err
	}},
	{"GET /projects", "projects", "projects", fixed("/projects"), "next_page_token", true, func(ctx context.Context, st *store.Store, t *listTenant) error {
		_, err := st.Catalog.AllProjects(ctx, t.company)
		return err
	}},
	{"GET /scans", "projects", "scans", fixed("/scans"), "next_page_token", true, func(ctx context.Context, st *store.Store, t *listTenant) error {
		return drain(func(token string) (string, error) {
			p, err := st.Scans.ListScans(ctx, t.company, scans.ScanQuery{}, storepage.Request{Limit: 100, Token: token})
			return p.Next, err
		})
	}},
	{"GET /policies", "policies", "policies", fixed("/policies"), "next_page_token", true, func(ctx context.Context, st *store.Store, t *listTenant) error {
		return drain(func(token string) (string, error) {
			p, err := st.Catalog.ListPolicies(ctx, t.company, storepage.Request{Limit: 100, Token: token})
			return p.Next, err
		})
	}},
	{"GET /blocking-rules", "policies", "rules", fixed("/blocking-rules"), "next_page_token", true, func(ctx context.Context, st *store.Store, t *listTenant) error {
		_, err := st.Catalog.AllBlockingRules(ctx, t.company)
		return err
	}},
	{"GET /issues", "issues", "scan", fixed("/issues"), "next_page_token", true, func(ctx context.Context, st *store.Store, t *listTenant) error {
		return st.Lists.EachIssue(ctx, t.company, func(findings.Issue) error { return nil })
	}},
	{"GET /issues/sca", "issues", "scan", fixed("/issues/sca"), "next_page_token", true, func(ctx context.Context, st *store.Store, t *listTenant) error {
		return drain(func(token string) (string, error) {
			resPage, err := st.SCA.ListSCAIssues(ctx, t.company, 0, storepage.Request{Limit: 100, Token: token})
			res := resPage
			return res.Next, err
		})
	}},
	{"GET /issues/code-quality", "issues", "scan", func(t *listTenant) string { return "/issues/code-quality?project=" + t.project }, "next_page_token", true,
		func(ctx context.Context, st *store.Store, t *listTenant) error {
			p, err := st.Catalog.ProjectByName(ctx, t.company, t.project)
			if err != nil {
				return err
			}
			return drain(func(token string) (string, error) {
				resPage, err := st.Quality.ListProjectQualityIssues(ctx, t.company, p.ID, storepage.Request{Limit: 100, Token: token})
				res := resPage
				return res.Next, err
			})
		}},
	{"GET /scan/{scan_id}/issues", "issues", "scan", func(t *listTenant) string { return "/scan/" + t.scanID + "/issues" }, "next_page_token", true,
		func(ctx context.Context, st *store.Store, t *listTenant) error {
			return st.Lists.EachScanIssue(ctx, t.company, t.scanID, func(findings.Issue) error { return nil })
		}},
	{"GET /scan/{scan_id}/issues/sca", "issues", "scan", func(t *listTenant) string { return "/scan/" + t.scanID + "/issues/sca" }, "next_page_token", true,
		func(ctx context.Context, st *store.Store, t *listTenant) error {
			return drain(func(token string) (string, error) {
				resPage, err := st.SCA.ListScanSCAIssues(ctx, t.company, t.scanID, storepage.Request{Limit: 100, Token: token})
				res := resPage
				return res.Next, err
			})
		}},
	{"GET /scan/{scan_id}/issues/quality", "issues", "scan", func(t *listTenant) string { return "/scan/" + t.scanID + "/issues/quality" }, "next_page_token", true,
		func(ctx context.Context, st *store.Store, t *listTenant) error {
			return drain(func(token string) (string, error) {
				resPage, err := st.Quality.ListScanQualityIssues(ctx, t.company, t.scanID, "", storepage.Request{Limit: 100, Token: token})
				res := resPage
				return res.Next, err
			})
		}},
}

// listCase is one call of a route: its query, or "" when the route cannot
// make the call.
type listCase struct {
	name  string
	query func(t *listTenant, r listRoute) string
}

var listCases = []listCase{
	{"page 1 of 20", func(*listTenant, listRoute) string { return "page_size=20" }},
	{"page 100 of 5, by cursor", func(t *listTenant, r listRoute) string {
		if r.cursor == "" || t.cursor100[r.name] == "" {
			return ""
		}
		return "page_size=5&" + r.cursor + "=" + url.QueryEscape(t.cursor100[r.name])
	}},
	{"page 100 of 5, by number", func(_ *listTenant, r listRoute) string {
		if !r.numbers {
			return ""
		}
		return "page=100&page_size=5"
	}},
}

// url is the request URL of a route's path with query q.
func (r listRoute) url(t *listTenant, q string) string {
	p := routes.BasePath + r.path(t)
	if strings.Contains(p, "?") {
		return p + "&" + q
	}
	return p + "?" + q
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

func runLists(ctx context.Context, db *dynamodb.Client, only *regexp.Regexp, small, large, iterations, naiveIterations, workers int) error {
	// Only the routes that match are loaded and measured.
	routes := slices.DeleteFunc(slices.Clone(listRoutes), func(r listRoute) bool { return !only.MatchString(r.name) })
	db = dynamodb.New(db.Options(), func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, timeCalls) })
	st := store.New(db, fmt.Sprintf("bench_lists_%d", time.Now().UnixNano()))
	if err := bulkload.CreateTable(ctx, st, false); err != nil {
		return err
	}
	h, err := listHandlers(st)
	if err != nil {
		return err
	}
	tenants, err := loadListTenants(ctx, st, routes, []int{small, large}, workers)
	if err != nil {
		return err
	}
	for _, r := range routes {
		if r.cursor == "" {
			continue
		}
		for _, t := range tenants[r.loader] {
			if t.cursor100[r.name], err = walkTo100(ctx, h[r.handler], t, r); err != nil {
				return err
			}
		}
	}
	m := &listMeasure{routes: routes, tenants: tenants, h: h, results: map[listKey][]sample{}, naive: map[listKey][]sample{}}
	fmt.Printf("\nMeasuring the list routes, %d calls per case and size (after 3 warm-up calls), alternating sizes...\n", iterations)
	if err := m.measure(ctx, iterations); err != nil {
		return err
	}
	fmt.Printf("Naive baselines, %d calls per size...\n", naiveIterations)
	if err := m.measureNaive(ctx, st, naiveIterations); err != nil {
		return err
	}
	m.print(small, large)
	return nil
}

// listHandlers are the groups whose lists are measured, on st, with the
// rate limit on (with limits no run reaches), so each request makes the
// same calls as in AWS: key, user, rate-limit window, reads.
func listHandlers(st *store.Store) (map[string]http.Handler, error) {
	sealKey := make([]byte, 32)
	_, _ = rand.Read(sealKey)
	sealer, err := secrets.NewLocal(sealKey)
	if err != nil {
		return nil, err
	}
	srv := &httpapi.Server{Auth: auth.New(st.Tenancy, auth.JWTConfig{}), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		RateLimit: &httpapi.RateLimiter{Store: st.Tenancy, Limit: tenancy.RateLimit{PerMinute: 1 << 30, PerHour: 1 << 30}}}
	deps := config.Deps{Server: srv, Store: st}
	return map[string]http.Handler{
		"teams": teams.New(deps),
		"integrations": integrations.NewWithOptions(deps, integrations.Options{
			Sealer: sealer, Host: scmhost.New(scmhost.Options{})}),
		"webhooks": webhooks.NewWithOptions(deps, webhooks.Options{Sealer: sealer}),
		"accounts": accounts.New(deps),
		"projects": projects.New(deps),
		"policies": policies.New(deps),
		"issues":   issues.New(deps),
	}, nil
}

// loadListTenants loads one tenant per loader the routes use and size.
func loadListTenants(ctx context.Context, st *store.Store, routes []listRoute, sizes []int, workers int) (map[string][]*listTenant, error) {
	tenants := map[string][]*listTenant{}
	for _, r := range routes {
		if tenants[r.loader] != nil {
			continue
		}
		for _, size := range sizes {
			t, err := newListTenant(ctx, st, r.loader, size)
			if err != nil {
				return nil, err
			}
			start := time.Now()
			if err := loaders[r.loader](ctx, st, t, workers); err != nil {
				return nil, fmt.Errorf("loading %s at %d: %w", r.loader, size, err)
			}
			fmt.Printf("loaded %s at %d items in %.1f s\n", r.loader, size, time.Since(start).Seconds())
			tenants[r.loader] = append(tenants[r.loader], t)
		}
	}
	return tenants, nil
}

// listKey is a route, a case and a tenant size by index.
type listKey struct{ route, c, t int }

// listMeasure is one run's routes, tenants and samples.
type listMeasure struct {
	routes  []listRoute
	tenants map[string][]*listTenant
	h       map[string]http.Handler
	results map[listKey][]sample
	naive   map[listKey][]sample
	ratios  []float64 // GET /teams page 1: request time / DynamoDB chain
}

// measure calls every route, case and size iterations times (after three
// warm-up calls), alternating sizes.
func (m *listMeasure) measure(ctx context.Context, iterations int) error {
	for it := -3; it < iterations; it++ {
		for r, route := range m.routes {
			for c, lc := range listCases {
				for n, t := range m.tenants[route.loader] {
					q := lc.query(t, route)
					if q == "" {
						continue
					}
					tl := &timeline{}
					s, err := call(context.WithValue(ctx, timelineKey{}, tl), m.h[route.handler], t.apiKey, route.url(t, q))
					if err != nil {
						return err
					}
					if it < 0 {
						continue
					}
					m.results[listKey{r, c, n}] = append(m.results[listKey{r, c, n}], s)
					if route.name == "GET /teams" && c == 0 {
						m.ratios = append(m.ratios, float64(s.Latency)/float64(tl.chain()))
					}
				}
			}
		}
	}
	return nil
}

// measureNaive runs each route's naive baseline iterations times per size.
func (m *listMeasure) measureNaive(ctx context.Context, st *store.Store, iterations int) error {
	for r, route := range m.routes {
		if route.naive == nil {
			continue
		}
		for n, t := range m.tenants[route.loader] {
			for range iterations {
				meter := &ddb.Meter{}
				start := time.Now()
				if err := route.naive(ddb.WithMeter(ctx, meter), st, t); err != nil {
					return fmt.Errorf("%s naive: %w", route.name, err)
				}
				calls, rcu, _ := meter.Snapshot()
				m.naive[listKey{r, 0, n}] = append(m.naive[listKey{r, 0, n}], sample{Latency: time.Since(start), RCU: rcu, Calls: calls})
			}
		}
	}
	return nil
}

// print writes the table of the run and its notes.
func (m *listMeasure) print(small, large int) {
	fmt.Printf("\n| route | call | p50 ms @%d | p95 ms @%d | RCU @%d | p50 ms @%d | p95 ms @%d | RCU @%d | p95 ratio | RCU ratio |\n",
		small, small, small, large, large, large)
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	row := func(route, name string, a, b []sample) {
		fmt.Printf("| %s | %s | %s | %s | %.1f | %s | %s | %.1f | %.2f | %.2f |\n", route, name,
			ms(percentile(a, .5)), ms(percentile(a, .95)), meanRCU(a),
			ms(percentile(b, .5)), ms(percentile(b, .95)), meanRCU(b),
			float64(percentile(b, .95))/float64(percentile(a, .95)), meanRCU(b)/meanRCU(a))
	}
	for r, route := range m.routes {
		for c, lc := range listCases {
			a, b := m.results[listKey{r, c, 0}], m.results[listKey{r, c, 1}]
			if len(a) == 0 {
				fmt.Printf("| %s | %s | %s |||||||||\n", route.name, lc.name, unsupported(route, c))
				continue
			}
			row(route.name, lc.name, a, b)
		}
		if route.naive == nil {
			fmt.Printf("| %s | naive: read everything | (the route reads everything) |||||||||\n", route.name)
			continue
		}
		row(route.name, "naive: read everything", m.naive[listKey{r, 0, 0}], m.naive[listKey{r, 0, 1}])
	}
	slices.Sort(m.ratios)
	fmt.Printf("\nRCU is consumed read capacity per call, authentication included; ratio = @%d / @%d.\n", large, small)
	if m.tenants["webhooks"] != nil {
		fmt.Printf("GET /webhooks holds at most %d endpoints at either size (store.MaxWebhooksPerCompany).\n", delivery.MaxWebhooksPerCompany)
	}
	if len(m.ratios) > 0 {
		fmt.Printf("GET /teams page 1, request time / its DynamoDB calls' slowest chain: p50 %.2f, p95 %.2f (%d calls).\n",
			m.ratios[len(m.ratios)/2], m.ratios[min(len(m.ratios)-1, len(m.ratios)*95/100)], len(m.ratios))
	}
}

// unsupported says why a route has no measurement for a case.
func unsupported(r listRoute, c int) string {
	switch {
	case c == 1 && r.cursor == "":
		return "no cursor: pages by number only"
	case c == 1:
		return "fewer than 100 pages of 5"
	case c == 2:
		return "no page numbers: cursor only (page≠1 is 400)"
	}
	return "not measured"
}

// walkTo100 follows the route's cursor from page 1 (of 5) and returns the
// token of page 100 ("" when the list has fewer pages).
func walkTo100(ctx context.Context, h http.Handler, t *listTenant, r listRoute) (string, error) {
	token := ""
	for page := 1; page < 100; page++ {
		q := "page_size=5"
		if token != "" {
			q += "&" + r.cursor + "=" + url.QueryEscape(token)
		}
		req := httptest.NewRequestWithContext(ctx, "GET", r.url(t, q), nil)
		req.Header.Set(auth.APIKeyHeader, t.apiKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var body struct {
			Next *string `json:"next_page_token"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 {
			return "", fmt.Errorf("%s page %d of 5 at %d items: %d %s", r.name, page, t.size, rec.Code, rec.Body)
		}
		if body.Next == nil || *body.Next == "" {
			return "", nil
		}
		token = *body.Next
	}
	return token, nil
}
