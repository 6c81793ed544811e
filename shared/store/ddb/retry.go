package ddb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/acme/codescan-api/shared/awsclient"
)

// Optimistic-concurrency budget of a write path: attempts, and the longest
// single wait.
const (
	MaxAttempts = 10
	maxWait     = 800 * time.Millisecond
)

// Retrying runs write until it succeeds or fails for good: a failed
// condition (ErrConflict: a concurrent writer changed what write read) is
// retried with jittered exponential back-off; past the budget the error
// wraps ErrUnavailable. write must read what it decides on afresh on every
// call. Only conflicts are retried here: DynamoDB's transient refusals are
// the client's retryer's (see awsclient), so a throttled call is tried at
// most awsclient.MaxAttempts times, not that many times per attempt here.
func (t *Table) Retrying(ctx context.Context, write func() error) error {
	for attempt := 0; ; attempt++ {
		err := write()
		if err == nil || !errors.Is(err, ErrConflict) {
			return err
		}
		if attempt+1 == MaxAttempts {
			return fmt.Errorf("%w after %d attempts: %w", ErrUnavailable, MaxAttempts, err)
		}
		if err := Sleep(ctx, attempt); err != nil {
			return err
		}
	}
}

// Sleep waits a jittered, exponentially growing time before attempt+1.
func Sleep(ctx context.Context, attempt int) error {
	wait := min(10*time.Millisecond<<attempt, maxWait)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait/2 + rand.N(wait/2+1)):
		return nil
	}
}

// Transient reports whether err is DynamoDB (or the way to it) asking to
// try again later: what the client's retry policy retries (throttling, a
// transaction conflict, a server or connection error, a timeout of the
// call), its budget spent, or a deadline that ran out.
func Transient(err error) bool {
	if errors.Is(err, ErrUnavailable) || awsclient.Retryable(err) {
		return true
	}
	var timeout interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &timeout) && timeout.Timeout())
}

// Call runs one DynamoDB call. The client has retried what DynamoDB refused
// for a while (see awsclient); an error that is still such a refusal wraps
// ErrUnavailable, so callers tell "try again later" from a failure of the
// request itself. The retryer repeats calls that are safe to repeat: reads,
// puts, conditional writes, and transactions (one ClientRequestToken for
// every attempt); an unconditional ADD repeated after a timeout that had in
// fact succeeded counts twice, which only ids and rate-limit windows do (an
// id skipped, a request counted twice).
func Call[T any](do func() (T, error)) (T, error) {
	out, err := do()
	if err != nil && !errors.Is(err, ErrUnavailable) && Transient(err) {
		err = fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return out, err
}

// MaxTxAttempts bounds the read-decide-write rounds of an update that
// keeps meeting concurrent changes.
const MaxTxAttempts = 5
