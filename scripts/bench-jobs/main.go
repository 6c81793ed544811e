// Command bench-jobs measures what the scheduled SLA check and weekly digest
// read on DynamoDB Local (the one DYNAMODB_ENDPOINT names; `make bench`
// starts it) at several tenant sizes (BENCH_JOBS_SIZES), each in a table of
// its own holding one company: its issues (demo.SASTIssues, about 60% open)
// loaded with bulkload.Issues, which writes the items of the issue
// write path, due index keys included. At every size the same number of
// open critical issues (BENCH_JOBS_DUE) fell due in the half hour before
// the run, and every other open issue was detected in the two days before
// it, so no other is due: what is due stays the same, what is stored grows.
//
// Per size it prints, for the job as it ran before the index (reading
// every issue of the company: store.EachIssue) and for the jobs as they
// run now: a first SLA run (raises the due issues), a second an hour later
// (nothing new is due) and the digest. Each row: DynamoDB calls, read
// capacity (RCU, as DynamoDB Local reports it) and wall time.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/demo"
	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

func main() {
	sizes := flag.String("sizes", envOr("BENCH_JOBS_SIZES", "10000,1000000"), "issues per tenant, comma-separated (env BENCH_JOBS_SIZES)")
	due := flag.Int("due", envInt("BENCH_JOBS_DUE", 100), "issues that fall due before the measured run, at every size (env BENCH_JOBS_DUE)")
	flag.Parse()
	if err := run(context.Background(), *sizes, *due); err != nil {
		fmt.Fprintln(os.Stderr, "bench-jobs:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// row is one measured job run.
type row struct {
	size     int
	what     string
	requests int
	rcu      float64
	took     time.Duration
	result   string
}

func run(ctx context.Context, sizes string, due int) error {
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		return fmt.Errorf("DYNAMODB_ENDPOINT is unset (run it with `make bench`)")
	}
	db, err := config.NewDynamoDB(ctx, endpoint)
	if err != nil {
		return err
	}
	var rows []row
	for _, f := range strings.Split(sizes, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || size < due {
			return fmt.Errorf("size %q: want a number of at least %d (the due issues)", f, due)
		}
		rs, err := measure(ctx, db, size, due)
		if err != nil {
			return err
		}
		rows = append(rows, rs...)
	}
	fmt.Println("\n| issues | run | DynamoDB calls | RCU | ms | result |")
	fmt.Println("|---:|---|---:|---:|---:|---|")
	for _, r := range rows {
		fmt.Printf("| %d | %s | %d | %.1f | %.0f | %s |\n", r.size, r.what, r.requests, r.rcu, float64(r.took.Microseconds())/1000, r.result)
	}
	return nil
}

// measure loads one tenant of size issues into a table of its own, runs
// the jobs and drops the table.
func measure(ctx context.Context, db *dynamodb.Client, size, due int) ([]row, error) {
	st := store.New(db, fmt.Sprintf("benchjobs_%d_%d", size, time.Now().UnixNano()))
	if err := bulkload.CreateTable(ctx, st, false); err != nil {
		return nil, err
	}
	defer func() {
		_, _ = db.DeleteTable(context.WithoutCancel(ctx), &dynamodb.DeleteTableInput{TableName: aws.String(st.TableName())})
	}()
	company, err := st.Ledger.NextID(ctx, "company")
	if err != nil {
		return nil, err
	}
	now := time.Date(2026, 6, 3, 12, 0, 0, 0, time.UTC) // a Wednesday
	issues := benchIssues(size, due, now)
	start := time.Now()
	if err := bulkload.Issues(ctx, st, company, issues, 8, nil); err != nil {
		return nil, err
	}
	fmt.Printf("loaded %d issues in %s\n", size, time.Since(start).Round(time.Second))

	var rows []row
	timed := func(what string, job func(context.Context) (string, error)) error {
		var m ddb.Meter
		start := time.Now()
		result, err := job(ddb.WithMeter(ctx, &m))
		if err != nil {
			return fmt.Errorf("%s at %d: %w", what, size, err)
		}
		requests, rcu, _ := m.Snapshot()
		rows = append(rows, row{size: size, what: what, requests: requests, rcu: rcu, took: time.Since(start), result: result})
		return nil
	}
	if err = timed("before: every issue read (EachIssue)", everyIssueRead(st, company, now)); err != nil {
		return nil, err
	}
	for n, at := range []time.Time{now, now.Add(time.Hour)} {
		err = timed(fmt.Sprintf("after: SLA run %d", n+1), func(ctx context.Context) (string, error) {
			raised, err := scheduler.SLAChecks(ctx, scheduler.StoreOf(st), at)
			return fmt.Sprintf("%d breaches raised", raised), err
		})
		if err != nil {
			return nil, err
		}
	}
	err = timed("after: weekly digest", func(ctx context.Context) (string, error) {
		n, err := scheduler.WeeklyDigest(ctx, scheduler.StoreOf(st), now)
		return fmt.Sprintf("%d digest recorded", n), err
	})
	return rows, err
}

// benchIssues are size demo SAST issues over 100 projects: the first due
// of them open and critical, fallen due half an hour before now (after the
// previous hourly run); the other open ones detected in the last two days,
// so not due.
func benchIssues(size, due int, now time.Time) []findings.Issue {
	var projects []schema.Project
	for k := range 100 {
		projects = append(projects, schema.Project{ID: int64(k + 1), Name: fmt.Sprintf("svc-%03d", k), Branches: []string{"develop"}})
	}
	issues := demo.SASTIssues(uint64(size), projects, size)
	crDays := sla.Defaults().DaysToFix["CR"]
	for k := range issues {
		i := &issues[k]
		switch {
		case k < due: // fell due half an hour ago, after the previous hourly run
			i.Status, i.Urgency = "open", "CR"
			i.CreatedAt = now.AddDate(0, 0, -crDays).Add(-30 * time.Minute).Format(time.RFC3339)
		case i.Status == "open": // detected in the last two days: not due
			i.CreatedAt = now.Add(-time.Duration(k%2880) * time.Minute).Format(time.RFC3339)
		}
	}
	return issues
}

// everyIssueRead is the "before" job: it reads every issue of the company
// (EachIssue) and counts the open ones overdue at now.
func everyIssueRead(st *store.Store, company int64, now time.Time) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		settings, _, err := st.Catalog.SLASettings(ctx, company)
		if err != nil {
			return "", err
		}
		read, overdue := 0, 0
		err = st.Lists.EachIssue(ctx, company, func(i findings.Issue) error {
			read++
			first, err := time.Parse(time.RFC3339, i.CreatedAt)
			if err == nil && i.Status == "open" {
				if s, _ := sla.Status(first, i.Urgency, settings, now); s == sla.Overdue {
					overdue++
				}
			}
			return err
		})
		return fmt.Sprintf("%d issues read, %d overdue", read, overdue), err
	}
}
