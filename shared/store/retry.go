package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// ErrUnavailable is returned when DynamoDB kept refusing a write past the
// retry budget (throttling, transaction conflicts, timeouts, a branch busy
// with another upload): the caller may try again later (503 with
// Retry-After), and nothing half-done is left behind.
var ErrUnavailable = errors.New("unavailable")

// Retry budget of a write path: attempts, and the longest single wait.
const (
	maxAttempts = 10
	maxWait     = 800 * time.Millisecond
)

// retrying runs write until it succeeds or fails for good: a failed
// condition (ErrConflict: a concurrent writer changed what write read) is
// retried with jittered exponential back-off; past the budget the error
// wraps ErrUnavailable. write must read what it decides on afresh on every
// call. (Each DynamoDB call already retries transient refusals: see call.)
func (s *Store) retrying(ctx context.Context, write func() error) error {
	for attempt := 0; ; attempt++ {
		err := write()
		if err == nil || !errors.Is(err, ErrConflict) {
			return err
		}
		if attempt+1 == maxAttempts {
			return fmt.Errorf("%w after %d attempts: %w", ErrUnavailable, maxAttempts, err)
		}
		if err := sleep(ctx, attempt); err != nil {
			return err
		}
	}
}

// sleep waits a jittered, exponentially growing time before attempt+1.
func sleep(ctx context.Context, attempt int) error {
	wait := min(10*time.Millisecond<<attempt, maxWait)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait/2 + rand.N(wait/2+1)):
		return nil
	}
}

// Transient reports whether err is DynamoDB asking to try again later:
// throttling, a transaction conflict, an internal error or a timeout of
// the call (not of the caller's context).
func Transient(err error) bool {
	if errors.Is(err, ErrUnavailable) {
		return true
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded":
				return true
			}
		}
		return false
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
			"TransactionConflictException", "TransactionInProgressException", "InternalServerError",
			"ServiceUnavailable", "LimitExceededException":
			return true
		}
	}
	var timeout interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &timeout) && timeout.Timeout())
}

// call runs one DynamoDB call, retrying DynamoDB's transient refusals with
// jittered exponential back-off; past the budget the error wraps
// ErrUnavailable. Every call the store makes goes through it, so a single
// throttled or timed-out call never fails a request. Calls are safe to
// repeat: reads, puts, conditional writes, and transactions (the SDK keeps
// their idempotency token); an unconditional ADD repeated after a timeout
// that had in fact succeeded counts twice, which only ids and rate-limit
// windows do (an id skipped, a request counted twice).
func call[T any](ctx context.Context, do func() (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		out, err := do()
		if err == nil || !Transient(err) {
			return out, err
		}
		if attempt+1 == maxAttempts {
			return out, fmt.Errorf("%w after %d attempts: %w", ErrUnavailable, maxAttempts, err)
		}
		if err := sleep(ctx, attempt); err != nil {
			return out, err
		}
	}
}
