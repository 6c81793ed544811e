// Command bench measures, in two suites (-suites), the findings read APIs
// and the list routes (see lists.go). The findings suite runs them at two
// tenant sizes on
// DynamoDB Local (the one DYNAMODB_ENDPOINT names; `make bench` starts it).
// It loads one company with -small issues and one with -large issues over
// -projects projects, then calls GET /issues/groups (and the drill-down)
// through the real handler, authentication included, alternating between
// the two companies, and prints p50/p95 latency and consumed RCU per call
// beside a naive baseline that reads every issue of the company and groups
// them in memory, measured in the same run.
//
// Loading uses bulkload.Issues, which writes exactly the items of the
// counting write path (a store test compares them item by item) with
// parallel batch writes: the transactional path serialises on the
// company-wide counters and would take far longer for 200,000 issues.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/schollz/progressbar/v3"

	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/scripts/internal/benchkit"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/demo"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

const maxIssues = 1_000_000

// The environment's defaults of the flags.
var envInt, envString = benchkit.EnvInt, benchkit.EnvString

func main() {
	small := flag.Int("small", envInt("BENCH_SMALL", 10_000), "issues of the small company (env BENCH_SMALL)")
	large := flag.Int("large", envInt("BENCH_LARGE", 200_000), "issues of the large company (env BENCH_LARGE), at most 1,000,000")
	projects := flag.Int("projects", envInt("BENCH_PROJECTS", 120), "projects per company, at least 100")
	iterations := flag.Int("iterations", envInt("BENCH_ITERATIONS", 100), "measured calls per case and size")
	naiveIterations := flag.Int("naive-iterations", envInt("BENCH_NAIVE_ITERATIONS", 3), "measured calls of the naive baseline per size (env BENCH_NAIVE_ITERATIONS)")
	workers := flag.Int("workers", 8, "parallel loaders")
	suites := flag.String("suites", envString("BENCH_SUITES", "findings,lists"), "comma-separated suites to run: findings, lists (env BENCH_SUITES)")
	listSmall := flag.Int("list-small", envInt("BENCH_LIST_SMALL", 500), "items of each list of the small companies (env BENCH_LIST_SMALL), at least 500")
	listLarge := flag.Int("list-large", envInt("BENCH_LIST_LARGE", 50_000), "items of each list of the large companies (env BENCH_LIST_LARGE)")
	listRoutesRE := flag.String("list-routes", envString("BENCH_LIST_ROUTES", ""), "regular expression: only the list routes whose name matches it (env BENCH_LIST_ROUTES), e.g. issues")
	flag.Parse()
	only, err := regexp.Compile(*listRoutesRE)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: list-routes:", err)
		os.Exit(2)
	}
	if *small < 1 || *large < *small || *large > maxIssues || *projects < 100 || *iterations < 2 ||
		*listSmall < 500 || *listLarge < *listSmall {
		fmt.Fprintln(os.Stderr, "bench: need 1 <= small <= large <= 1,000,000, projects >= 100, iterations >= 2, 500 <= list-small <= list-large")
		os.Exit(2)
	}
	ctx := context.Background()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		fmt.Fprintln(os.Stderr, "bench: DYNAMODB_ENDPOINT is unset (run it with `make bench`)")
		os.Exit(2)
	}
	db, err := config.NewDynamoDB(ctx, endpoint)
	if err == nil && slices.Contains(strings.Split(*suites, ","), "findings") {
		err = run(ctx, db, *small, *large, *projects, *iterations, *naiveIterations, *workers)
	}
	if err == nil && slices.Contains(strings.Split(*suites, ","), "lists") {
		err = runLists(ctx, db, only, *listSmall, *listLarge, *iterations, *naiveIterations, *workers)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// tenant is one loaded company and the filter values the cases use.
type tenant struct {
	size    int
	company int64
	apiKey  string
	project string // a project's name
	repo    string // a repository URL two projects share
	file    string // a file path of that project
}

func run(ctx context.Context, db *dynamodb.Client, small, large, projects, iterations, naiveIterations, workers int) error {
	st := store.New(db, fmt.Sprintf("bench_%d", time.Now().UnixNano()))
	if err := bulkload.CreateTable(ctx, st, false); err != nil {
		return err
	}
	var tenants []*tenant
	for n, size := range []int{small, large} {
		t, err := load(ctx, st, n, size, projects, workers)
		if err != nil {
			return err
		}
		tenants = append(tenants, t)
	}
	srv := &httpapi.Server{Auth: auth.New(st.Tenancy, auth.JWTConfig{}), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	h := issues.New(config.Deps{Server: srv, Store: st})

	fmt.Printf("\nMeasuring %d calls per case and size (after 3 warm-up calls), alternating sizes...\n", iterations)
	results := make([][]sample, len(cases)*len(tenants))
	for it := -3; it < iterations; it++ {
		for c, cs := range cases {
			for n, t := range tenants {
				s, err := call(ctx, h, t.apiKey, cs.path(t))
				if err != nil {
					return err
				}
				if it >= 0 {
					results[c*len(tenants)+n] = append(results[c*len(tenants)+n], s)
				}
			}
		}
	}
	naive := make([][]sample, len(tenants))
	for n, t := range tenants {
		fmt.Printf("Naive baseline at %d issues (%d calls)...\n", t.size, naiveIterations)
		for range naiveIterations {
			s, err := naiveGroups(ctx, st, t.company)
			if err != nil {
				return err
			}
			naive[n] = append(naive[n], s)
		}
	}
	report(tenants, results, naive)
	return benchExport(ctx, st, tenants[len(tenants)-1])
}

// load creates a company with an admin API key and projects, and loads
// size issues.
func load(ctx context.Context, st *store.Store, n, size, projects, workers int) (*tenant, error) {
	bt, err := benchkit.NewTenant(ctx, st, n, fmt.Sprintf("Bench %d", size))
	if err != nil {
		return nil, err
	}
	id := bt.Company
	t := &tenant{size: size, company: id, apiKey: bt.APIKey}
	var ps []schema.Project
	for k := range projects {
		repo := fmt.Sprintf("https://github.com/bench/svc-%03d", k)
		if k == 1 {
			repo = "git@github.com:bench/svc-000.git" // projects 0 and 1 share a repository
		}
		p, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: id, Name: fmt.Sprintf("svc-%03d", k), RepoURL: repo,
			Branches: []string{"develop", fmt.Sprintf("release/%d", k%5)}})
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	is := demo.SASTIssues(uint64(size), ps, size)
	t.project, t.repo = ps[0].Name, "https://github.com/bench/svc-000"
	for _, i := range is {
		if i.ProjectID == ps[0].ID {
			t.file = i.FilePath
			break
		}
	}
	var bar *progressbar.ProgressBar
	err = bulkload.Issues(ctx, st, id, is, workers, func(written, total int) {
		if bar == nil {
			bar = progressbar.Default(int64(total), fmt.Sprintf("loading %d issues (+ counters)", size))
		}
		_ = bar.Add(written)
	})
	if bar != nil {
		_ = bar.Finish()
	}
	return t, err
}

// benchCase is one call of the table.
type benchCase struct {
	name  string
	query func(t *tenant) string
}

func (c benchCase) path(t *tenant) string { return routes.BasePath + c.query(t) }

var cases = []benchCase{
	{"groups cwe", func(*tenant) string { return "/issues/groups" }},
	{"groups cwe, breakdown", func(*tenant) string { return "/issues/groups?breakdown=true" }},
	{"groups cwe, page 2 of 5", func(*tenant) string { return "/issues/groups?page=2&page_size=5" }},
	{"groups cwe, project", func(t *tenant) string { return "/issues/groups?project=" + t.project }},
	{"groups cwe, branch (all projects)", func(*tenant) string { return "/issues/groups?branch=develop" }},
	{"groups file_path", func(*tenant) string { return "/issues/groups?group_by=file_path" }},
	{"groups file_path, breakdown", func(*tenant) string { return "/issues/groups?group_by=file_path&breakdown=true" }},
	{"groups file_path, project, breakdown", func(t *tenant) string {
		return "/issues/groups?group_by=file_path&breakdown=true&project=" + t.project
	}},
	{"groups file_path, repo (2 projects)", func(t *tenant) string { return "/issues/groups?group_by=file_path&repo=" + t.repo }},
	{"issues cwe=79, page 1", func(*tenant) string { return "/issues?cwe=CWE-79" }},
	{"issues cwe=79 + project, page 1", func(t *tenant) string { return "/issues?cwe=79&project=" + t.project }},
	{"issues project+file, page 1", func(t *tenant) string { return "/issues?project=" + t.project + "&file_path_exact=" + t.file }},
}

// sample is one measured call; call measures one request through the
// handler with a meter on its context (shared with bench-components).
type sample = benchkit.Sample

var call = benchkit.Call

// naiveGroups is what counting at read time costs: read every issue of the
// company and count its CWE and file groups.
func naiveGroups(ctx context.Context, st *store.Store, company int64) (sample, error) {
	m := &ddb.Meter{}
	start := time.Now()
	byCWE, byFile := map[int]int{}, map[string]int{}
	err := st.Lists.EachIssue(ddb.WithMeter(ctx, m), company, func(i findings.Issue) error {
		byCWE[i.CWE]++
		byFile[i.FilePath]++
		return nil
	})
	calls, rcu, _ := m.Snapshot()
	return sample{Latency: time.Since(start), RCU: rcu, Calls: calls}, err
}

var percentile, meanRCU = benchkit.Percentile, benchkit.MeanRCU

var ms = benchkit.Millis

func report(tenants []*tenant, results [][]sample, naive [][]sample) {
	small, large := tenants[0].size, tenants[1].size
	fmt.Printf("\n| call | p50 ms @%d | p95 ms @%d | RCU @%d | p50 ms @%d | p95 ms @%d | RCU @%d | p95 ratio | naive RCU / RCU @%d |\n",
		small, small, small, large, large, large, large)
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	naiveLarge := meanRCU(naive[1])
	for c, cs := range cases {
		a, b := results[c*2], results[c*2+1]
		fmt.Printf("| %s | %s | %s | %.1f | %s | %s | %.1f | %.2f | %.0fx |\n", cs.name,
			ms(percentile(a, .5)), ms(percentile(a, .95)), meanRCU(a),
			ms(percentile(b, .5)), ms(percentile(b, .95)), meanRCU(b),
			float64(percentile(b, .95))/float64(percentile(a, .95)), naiveLarge/meanRCU(b))
	}
	a, b := naive[0], naive[1]
	fmt.Printf("| naive: read every issue, group in memory | %s | %s | %.1f | %s | %s | %.1f | %.2f | 1x |\n",
		ms(percentile(a, .5)), ms(percentile(a, .95)), meanRCU(a),
		ms(percentile(b, .5)), ms(percentile(b, .95)), meanRCU(b),
		float64(percentile(b, .95))/float64(percentile(a, .95)))
	fmt.Printf("\nRCU is DynamoDB's consumed read capacity per call, authentication included (API key and user look-ups).\n"+
		"p95 ratio = p95 @%d / p95 @%d. The naive baseline reads every issue of the company whatever the filters.\n", large, small)
}
