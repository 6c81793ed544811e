package testenv

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Writes signals every write the Env's store completes, for tests that
// wait for a worker's progress: a condition is checked again after each
// write instead of after a sleep.
type Writes struct{ ch chan struct{} }

// WatchWrites makes every write call of e.Store's client (a put, update,
// delete, transaction or batch write, once answered, retries included)
// signal the returned Writes; called again, it returns the same. Call it
// before starting anything that uses the store in another goroutine (a
// poller; StartIngester calls it): it replaces the store's client.
func (e *Env) WatchWrites(t testing.TB) *Writes {
	t.Helper()
	if e.writes != nil {
		return e.writes
	}
	w := &Writes{ch: make(chan struct{}, 1)}
	e.writes = w
	notify := func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("testenv-writes", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			switch in.Parameters.(type) {
			case *dynamodb.PutItemInput, *dynamodb.UpdateItemInput, *dynamodb.DeleteItemInput,
				*dynamodb.TransactWriteItemsInput, *dynamodb.BatchWriteItemInput:
				w.Signal()
			}
			return out, md, err
		}), middleware.After)
	}
	opts := e.Store.Client().Options()
	opts.APIOptions = append(slices.Clone(opts.APIOptions), notify)
	e.Store.SetClient(dynamodb.New(opts))
	return w
}

// Signal records one write (or any other progress a test waits for); a
// waiter not waiting yet sees it on its next wait.
func (w *Writes) Signal() {
	select {
	case w.ch <- struct{}{}:
	default: // one pending signal is enough: the waiter checks again
	}
}

// Until returns once cond holds: it checks cond, then again after every
// signalled write, and fails the test when limit passes first.
func (w *Writes) Until(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	for !cond() {
		select {
		case <-w.ch:
		case <-timeout.C:
			t.Fatalf("%s: not after %s", what, limit)
		}
	}
}
