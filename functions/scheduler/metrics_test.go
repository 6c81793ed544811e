package scheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/metrics"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
)

// Each run of a job is one EMF line by job: its duration, the items it
// handled and whether it failed; an unknown job is refused and emits none.
func TestJobMetrics(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	c := env.Company(t, "Jobs")
	old := time.Now().AddDate(0, -2, 0).UTC().Format(time.RFC3339)
	if _, err := bulkload.CreateIssues(ctx, env.Store, c.ID, []findings.Issue{{ID: "44444444-4444-4444-8444-444444444444", ProjectID: 3,
		ProjectName: "billing", Branch: "main", CWE: 89, FilePath: "db.go", Line: 7, Urgency: "CR", Status: "open",
		Title: "SQL injection", CreatedAt: old}}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	h := scheduler.Handler(&deliveryengine.Engine{Store: deliveryengine.StoreOf(env.Store), Metrics: metrics.New(&out, time.Now)}, scheduler.StoreOf(env.Store), scheduler.Feeds{})
	for job, items := range map[string]int{"sla": 1, "retries": 0, "stalled": 0} {
		if n, err := h(ctx, scheduler.Input{Job: job}); err != nil || n != items {
			t.Fatalf("%s: %d (%v), want %d", job, n, err, items)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h(cancelled, scheduler.Input{Job: "digest"}); err == nil {
		t.Fatal("digest on a cancelled context succeeded")
	}
	if _, err := h(ctx, scheduler.Input{Job: "nope"}); err == nil {
		t.Fatal("unknown job accepted")
	}
	got := map[string][2]float64{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			Service, Job                       string
			JobDuration, JobItems, JobFailures *float64
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Service != "scheduler" || m.JobDuration == nil || m.JobItems == nil || m.JobFailures == nil {
			t.Fatalf("line %q (%v)", l, err)
		}
		got[m.Job] = [2]float64{*m.JobItems, *m.JobFailures}
	}
	want := map[string][2]float64{"sla": {1, 0}, "retries": {0, 0}, "stalled": {0, 0}, "digest": {0, 1}}
	if len(got) != len(want) {
		t.Fatalf("jobs %v, want %v", got, want)
	}
	for job, w := range want {
		if got[job] != w {
			t.Errorf("%s: %v, want %v", job, got[job], w)
		}
	}
}
