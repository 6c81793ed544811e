package ddb

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Meter accumulates the consumed capacity and request count of every store
// Call made with a context that carries it (see WithMeter).
type Meter struct {
	mu       sync.Mutex
	Requests int
	Read     float64
	Write    float64
}

type meterKey struct{}

// WithMeter returns a context whose store calls are measured by m.
func WithMeter(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// Snapshot returns the figures so far.
func (m *Meter) Snapshot() (requests int, rcu, wcu float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.Requests, m.Read, m.Write
}

// Whether a recorded call reads or writes, for capacity reports that carry
// only a total (DynamoDB Local's).
const (
	Reading = false
	Writing = true
)

// Record adds one call's consumed capacity to the context's Meter.
func Record(ctx context.Context, write bool, caps ...*types.ConsumedCapacity) {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Requests++
	for _, c := range caps {
		if c == nil {
			continue
		}
		switch {
		case c.ReadCapacityUnits != nil || c.WriteCapacityUnits != nil:
			m.Read += aws.ToFloat64(c.ReadCapacityUnits)
			m.Write += aws.ToFloat64(c.WriteCapacityUnits)
		case write:
			m.Write += aws.ToFloat64(c.CapacityUnits)
		default:
			m.Read += aws.ToFloat64(c.CapacityUnits)
		}
	}
}

// RecordBatch records a batch response's consumed capacity.
func RecordBatch(ctx context.Context, write bool, caps []types.ConsumedCapacity) {
	ptrs := make([]*types.ConsumedCapacity, len(caps))
	for n := range caps {
		ptrs[n] = &caps[n]
	}
	Record(ctx, write, ptrs...)
}

// Total is the capacity mode every call asks for so a Meter can add it up.
const Total = types.ReturnConsumedCapacityTotal
