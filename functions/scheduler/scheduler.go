// Package scheduler is the Lambda handler of the scheduled jobs: EventBridge
// rules invoke it with {"job": "retries" | "sla" | "digest" | "stalled" |
// "exploits" | "tickets"} (see deployspec.Schedules). Retries are the delivery
// engine's (shared/deliveryengine), the SLA checks and the weekly digest record
// their notification events (jobs.go), the stalled job ends the scans the
// ingester gave up on (shared/sweep), and the exploits job imports the KEV
// and EPSS feeds (exploits.go), and the tickets job reconciles tickets
// with their trackers (tickets.go). The dev server runs them on timers.
package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/metrics"
	"github.com/acme/codescan-api/shared/sweep"
)

// Input is a rule's constant input.
type Input struct {
	Job string `json:"job"`
}

// Handler runs one job on st and returns how many items it handled,
// writing the run's metrics to the engine's emitter (the process's one).
// The jobs read the time from the engine's clock; the exploits job reads
// feeds. A failed job is logged on the engine's logger.
func Handler(d *deliveryengine.Engine, st Store, feeds Feeds) func(context.Context, Input) (int, error) {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	jobs := map[string]func(context.Context) (int, error){
		"retries": d.RunDue,
		"sla":     func(ctx context.Context) (int, error) { return SLAChecks(ctx, st, now()) },
		"digest":  func(ctx context.Context) (int, error) { return WeeklyDigest(ctx, st, now()) },
		"stalled": func(ctx context.Context) (int, error) {
			return sweep.Run(ctx, st.Sweep, now())
		},
		"exploits": func(ctx context.Context) (int, error) { return ImportExploits(ctx, st, feeds) },
		"tickets":  func(ctx context.Context) (int, error) { return ReconcileTickets(ctx, st.Tenancy, TicketerOf(d)) },
	}
	return func(ctx context.Context, in Input) (int, error) {
		run, ok := jobs[in.Job]
		if !ok {
			return 0, fmt.Errorf("unknown job %q", in.Job)
		}
		start := d.Metrics.Now()
		n, err := run(ctx)
		failures := 0.0
		if err != nil {
			failures = 1
			if d.Log != nil {
				d.Log.Error("scheduled job failed", "job", in.Job, "error", err.Error())
			}
		}
		d.Metrics.Emit(map[string]string{"Service": "scheduler", "Job": in.Job},
			metrics.Value{Name: metrics.JobDuration, Unit: metrics.Milliseconds, Value: d.Metrics.Since(start)},
			metrics.Value{Name: metrics.JobItems, Unit: metrics.Count, Value: float64(n)},
			metrics.Value{Name: metrics.JobFailures, Unit: metrics.Count, Value: failures})
		return n, err
	}
}
