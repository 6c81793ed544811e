package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/shared/store"
)

// How a worker dies at its n-th DynamoDB call (counted from 1, each call
// once however often the SDK retries it):
const (
	// killBefore: the call never reaches DynamoDB, nor does any after it
	// (the process is gone; its lease is not released and must expire).
	killBefore = iota
	// killAfter: the call is done by DynamoDB but its answer is lost, and
	// nothing after it runs (a write landed that the worker never knew of).
	killAfter
	// killCancel: the context is cancelled at the call (Lambda's
	// timeout): it and every later call fail, but what the worker does
	// without its context (releasing its lease) still runs.
	killCancel
	killModes
)

var killNames = []string{"before", "after", "cancel"}

// errKilled is how a killed worker's calls fail.
var errKilled = errors.New("chaos: worker killed")

// killer is a worker's death at its n-th DynamoDB call.
type killer struct {
	n, mode int
	calls   atomic.Int64
	dead    atomic.Bool
	cancel  context.CancelFunc
}

func (k *killer) String() string {
	if !k.dead.Load() {
		return fmt.Sprintf("not killed (%s call %d; %d calls)", killNames[k.mode], k.n, k.calls.Load())
	}
	return fmt.Sprintf("killed %s call %d", killNames[k.mode], k.n)
}

// store is a store on w's table and clock whose client dies as k says.
// The middleware sits first in Initialize, outside the SDK's retry loop,
// so a refusal DynamoDB asks to retry is retried as in production and the
// worker stops where the seed says, not earlier.
func (k *killer) store(w *world) *store.Store {
	die := func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("chaos-kill", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if k.dead.Load() && k.mode != killCancel {
				return middleware.InitializeOutput{}, middleware.Metadata{}, errKilled
			}
			if k.calls.Add(1) != int64(k.n) {
				return next.HandleInitialize(ctx, in)
			}
			k.dead.Store(true)
			switch k.mode {
			case killBefore:
				return middleware.InitializeOutput{}, middleware.Metadata{}, errKilled
			case killAfter:
				out, md, _ := next.HandleInitialize(ctx, in)
				return out, md, errKilled
			}
			k.cancel()
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
	}
	db := dynamodb.New(w.st.Client().Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(slices.Clone(o.APIOptions), die)
	})
	return store.New(db, w.st.TableName(), store.WithClock(w.now))
}

// newKiller draws a death within a worker's first max calls.
func (w *world) newKiller(max int) *killer {
	return &killer{n: 1 + w.rng.IntN(max), mode: w.rng.IntN(killModes)}
}

// died counts the worker's death, if it came before the worker was done.
func (w *world) died(worker string, k *killer) {
	if k.dead.Load() {
		w.counts["killed "+worker+" "+killNames[k.mode]]++
	}
}

// context is the context the killed worker runs under.
func (k *killer) context() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel = cancel
	return ctx
}
