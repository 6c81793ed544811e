// Package scheduler is the Lambda handler of the scheduled jobs: EventBridge
// rules invoke it with {"job": "retries" | "sla" | "digest" | "stalled"}
// (see deployspec.Schedules). Retries are the delivery engine's
// (shared/delivery), the SLA checks and the weekly digest record their
// notification events (jobs.go), and the stalled job ends the scans the
// ingester gave up on (shared/sweep). The dev server runs them on timers.
package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/delivery"
	"github.com/acme/codescan-api/shared/sweep"
)

// Input is a rule's constant input.
type Input struct {
	Job string `json:"job"`
}

// Handler runs one job and returns how many items it handled.
func Handler(d *delivery.Engine) func(context.Context, Input) (int, error) {
	return func(ctx context.Context, in Input) (int, error) {
		switch in.Job {
		case "retries":
			return d.RunDue(ctx)
		case "sla":
			return SLAChecks(ctx, d.Store, time.Now())
		case "digest":
			return WeeklyDigest(ctx, d.Store, time.Now())
		case "stalled":
			return sweep.Run(ctx, d.Store, time.Now())
		}
		return 0, fmt.Errorf("unknown job %q", in.Job)
	}
}
