// Command bench-components measures GET /components at several tenant
// sizes (components per company, -sizes, env BENCH_COMPONENTS; default
// 100, 1,000 and 10,000; 100,000 when asked) on DynamoDB Local (the one
// DYNAMODB_ENDPOINT names; `make bench` starts it). Each size is a company
// of its own whose components are written through the ingestion's write
// path (ReplaceComponents, one set per project branch), with the same
// package held by the same 20 projects at five versions at every size:
// the answer is constant, so its cost must be too. Each case runs through
// the real handler, authentication and rate limit included, and prints
// p50/p95 latency and the RCU DynamoDB reports, beside a naive baseline
// that reads every component set of the company.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acme/codescan-api/functions/components"
	"github.com/acme/codescan-api/scripts/internal/benchkit"
	"github.com/acme/codescan-api/shared/auth"
	comp "github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	storecomponents "github.com/acme/codescan-api/shared/store/components"
	"github.com/acme/codescan-api/shared/store/ddb"
)

const (
	log4j   = "pkg:maven/org.apache.logging.log4j/log4j-core"
	holders = 20 // projects holding log4j-core at every size
)

var log4jVersions = []string{"2.14.1", "2.16.0", "2.17.0", "2.17.1", "2.20.0"}

type tenant struct {
	size     int
	company  int64
	apiKey   string
	projects int
}

var cases = []struct{ name, query string }{
	{"any version", "purl=" + url.QueryEscape(log4j)},
	{"one version", "purl=" + url.QueryEscape(log4j+"@2.14.1")},
	{"version_lt=2.17.1 (Maven order)", "purl=" + url.QueryEscape(log4j) + "&version_lt=2.17.1"},
	{"unknown package", "purl=" + url.QueryEscape("pkg:npm/not-held")},
}

func main() {
	sizesFlag := flag.String("sizes", benchkit.EnvString("BENCH_COMPONENTS", "100,1000,10000"), "components per tenant, comma-separated (env BENCH_COMPONENTS), e.g. 100,1000,10000,100000")
	iterations := flag.Int("iterations", benchkit.EnvInt("BENCH_COMPONENT_ITERATIONS", 30), "measured calls per case and size")
	flag.Parse()
	var sizes []int
	for _, s := range strings.Split(*sizesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 100 {
			fmt.Fprintln(os.Stderr, "bench-components: sizes are integers of at least 100")
			os.Exit(2)
		}
		sizes = append(sizes, n)
	}
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		fmt.Fprintln(os.Stderr, "bench-components: DYNAMODB_ENDPOINT is unset (run it with `make bench`)")
		os.Exit(2)
	}
	if err := run(context.Background(), endpoint, sizes, *iterations); err != nil {
		fmt.Fprintln(os.Stderr, "bench-components:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, endpoint string, sizes []int, iterations int) error {
	db, err := config.NewDynamoDB(ctx, endpoint)
	if err != nil {
		return err
	}
	st := store.New(db, fmt.Sprintf("benchcomp_%d", time.Now().UnixNano()))
	if err := bulkload.CreateTable(ctx, st, false); err != nil {
		return err
	}
	var ts []*tenant
	for n, size := range sizes {
		start := time.Now()
		t, err := load(ctx, st, n, size)
		if err != nil {
			return err
		}
		fmt.Printf("loaded %d components over %d projects in %s\n", size, t.projects, time.Since(start).Round(time.Millisecond))
		ts = append(ts, t)
	}
	srv := &httpapi.Server{Auth: auth.New(st.Tenancy, auth.JWTConfig{}), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	h := components.New(config.Deps{Server: srv, Store: st})
	results := map[[2]int][]benchkit.Sample{}
	for it := -3; it < iterations; it++ {
		for c, cs := range cases {
			for n, t := range ts {
				s, err := benchkit.Call(ctx, h, t.apiKey, routes.BasePath+"/components?"+cs.query)
				if err != nil {
					return err
				}
				if it >= 0 {
					results[[2]int{c, n}] = append(results[[2]int{c, n}], s)
				}
			}
		}
	}
	fmt.Printf("\nGET /components, %d calls per case and size (RCU includes authentication):\n\n", iterations)
	fmt.Printf("| call | components | p50 / p95 ms | RCU |\n|---|---|---|---|\n")
	for c, cs := range cases {
		for n, t := range ts {
			ss := results[[2]int{c, n}]
			fmt.Printf("| %s | %d | %s / %s | %.1f |\n", cs.name, t.size, ms(benchkit.Percentile(ss, 0.5)), ms(benchkit.Percentile(ss, 0.95)), benchkit.MeanRCU(ss))
		}
	}
	fmt.Printf("\nNaive baseline: read every component set of the company and filter in memory:\n\n| components | RCU |\n|---|---|\n")
	for _, t := range ts {
		rcu, err := naive(ctx, st, t)
		if err != nil {
			return err
		}
		fmt.Printf("| %d | %.1f |\n", t.size, rcu)
	}
	return nil
}

// load creates a company, an admin with an API key, and size components
// over max(20, size/100) projects, written set by set as ingestion does.
func load(ctx context.Context, st *store.Store, n, size int) (*tenant, error) {
	bt, err := benchkit.NewTenant(ctx, st, n, fmt.Sprintf("Bench %d", size))
	if err != nil {
		return nil, err
	}
	id := bt.Company
	t := &tenant{size: size, company: id, apiKey: bt.APIKey, projects: max(holders, size/100)}
	per := size / t.projects
	libs := max(1, size/10) // each library held by about ten projects
	var wg sync.WaitGroup
	errs := make(chan error, t.projects)
	sem := make(chan struct{}, 8)
	for p := range t.projects {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var list []comp.Component
			for i := range per {
				purl := fmt.Sprintf("pkg:npm/lib-%d@1.0.%d", (p*per+i)%libs, p%10)
				if i == 0 && p < holders {
					purl = log4j + "@" + log4jVersions[p%len(log4jVersions)]
				}
				c, err := comp.New(purl, "", comp.Transitive, []string{"MIT"})
				if err != nil {
					errs <- err
					return
				}
				list = append(list, c)
			}
			_, err := st.Components.ReplaceComponents(ctx, storecomponents.SetRef{CompanyID: id, ProjectID: int64(p + 1), ProjectName: fmt.Sprintf("svc-%04d", p),
				Branch: "main", Engine: "cyclonedx", ScanID: fmt.Sprintf("00000000-0000-4000-8000-%012d", p), ScanAt: time.Now()}, list)
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return t, <-errs
}

// naive reads every project's component set (what a store without the
// package index would read to answer one package).
func naive(ctx context.Context, st *store.Store, t *tenant) (float64, error) {
	m := &ddb.Meter{}
	mctx := ddb.WithMeter(ctx, m)
	for p := range t.projects {
		if _, err := st.Components.ComponentSet(mctx, t.company, int64(p+1), "main", "cyclonedx"); err != nil {
			return 0, err
		}
	}
	_, rcu, _ := m.Snapshot()
	return rcu, nil
}

var ms = benchkit.Millis
