// Package outbound is the contract between the delivery engine
// (shared/deliveryengine) and the integrations it delivers to on another
// system: pull-request decoration, tickets, chat. A Channel turns an
// outbox event into jobs, one per integration that wants it; the engine
// claims each job as a delivery (so a job is attempted once however often
// the event arrives), attempts it, retries it with back-off (the host's
// Retry-After first), fails it for good past the horizon and logs every
// attempt per integration. A Channel's attempt must be idempotent on the
// far side: a retry finds what an earlier attempt created (a marker, a
// link item) and edits it instead of creating another.
package outbound

import (
	"context"
	"encoding/json"
	"time"

	"github.com/acme/codescan-api/shared/store/schema"
)

// Job is one delivery an event asks of a channel.
type Job struct {
	// Key names what the delivery is about (a scan, a ticket group): with
	// the channel and the recipient it makes the delivery's id, so the same
	// key is delivered once per recipient whichever event asks for it.
	Key string
	// Recipient is the integration the job goes to.
	Recipient string
	// Payload is what Attempt reads back, as small as it can be.
	Payload json.RawMessage
}

// Outcome is how one attempt went, as the delivery log records it.
type Outcome struct {
	StatusCode int // the far side's last answer, 0 without one
	Delivered  bool
	Retryable  bool
	RetryAfter time.Duration // the far side's Retry-After or rate-limit reset
	Err        string        // a class of failure, never the far side's words
	// Gone says the job has nothing left to do for good (its integration
	// or subject is gone): not retried, counted as dropped.
	Gone bool
}

// Channel is one kind of outbound integration.
type Channel interface {
	// Name is the delivery channel the engine records (unique).
	Name() string
	// Jobs are the deliveries ev asks of this channel; none when it asks
	// for nothing.
	Jobs(ctx context.Context, ev schema.Event) ([]Job, error)
	// Attempt tries one job once.
	Attempt(ctx context.Context, companyID int64, recipient string, payload json.RawMessage) Outcome
}
