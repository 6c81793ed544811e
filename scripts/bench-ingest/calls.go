package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// callStats adds up the DynamoDB calls of a run by operation: how many,
// and the time spent in them (concurrent calls each counted in full), so
// the bench shows where an ingestion's time goes.
type callStats struct {
	mu  sync.Mutex
	ops map[string]*opStat
}

type opStat struct {
	calls       int
	busy        time.Duration
	first, last time.Time // when its first call started and its last ended
}

func newCallStats() *callStats { return &callStats{ops: map[string]*opStat{}} }

// middleware records every call of a client it is added to.
func (c *callStats) middleware(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("benchCallStats",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			start := time.Now()
			out, md, err := next.HandleInitialize(ctx, in)
			op := awsmiddleware.GetOperationName(ctx)
			c.mu.Lock()
			s := c.ops[op]
			if s == nil {
				s = &opStat{}
				c.ops[op] = s
			}
			if s.calls == 0 {
				s.first = start
			}
			s.calls++
			s.busy += time.Since(start)
			s.last = time.Now()
			c.mu.Unlock()
			return out, md, err
		}), middleware.After)
}

// take returns the figures so far, busiest first, with when each operation
// was first and last called (seconds after since), and starts afresh.
func (c *callStats) take(since time.Time) string {
	c.mu.Lock()
	ops := c.ops
	c.ops = map[string]*opStat{}
	c.mu.Unlock()
	names := make([]string, 0, len(ops))
	for name := range ops {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return int(ops[b].busy - ops[a].busy) })
	out := ""
	for _, name := range names {
		s := ops[name]
		out += fmt.Sprintf(" %s %d calls %.1f s (%.1f–%.1f s);", name, s.calls, s.busy.Seconds(), s.first.Sub(since).Seconds(), s.last.Sub(since).Seconds())
	}
	return out
}
