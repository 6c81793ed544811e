// Package scheduler is the Lambda handler of the scheduled jobs: EventBridge
// rules invoke it with {"job": "retries" | "sla" | "digest" | "stalled"}
// (see deployspec.Schedules); the first three are the dispatcher's, the
// last ends the scans the ingester gave up on (sweep). The dev server runs
// them on timers.
package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/acme/codescan-api/functions/dispatcher"
	"github.com/acme/codescan-api/functions/ingester/sweep"
)

// Input is a rule's constant input.
type Input struct {
	Job string `json:"job"`
}

// Handler runs one job and returns how many items it handled.
func Handler(d *dispatcher.Dispatcher) func(context.Context, Input) (int, error) {
	return func(ctx context.Context, in Input) (int, error) {
		switch in.Job {
		case "retries":
			return d.RunDue(ctx)
		case "sla":
			return d.RunSLAChecks(ctx, time.Now())
		case "digest":
			return d.RunWeeklyDigest(ctx, time.Now())
		case "stalled":
			return sweep.Run(ctx, d.Store, time.Now())
		}
		return 0, fmt.Errorf("unknown job %q", in.Job)
	}
}
