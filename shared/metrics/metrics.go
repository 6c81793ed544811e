// Package metrics writes CloudWatch metrics in the embedded metric format
// (EMF): one JSON object per line on the function's standard output, which
// Lambda's log delivery turns into metrics without an API call on the
// request path (no PutMetricData latency, no IAM permission, no SDK).
package metrics

import (
	"encoding/json"
	"io"
	"slices"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of every metric the service emits.
const Namespace = "codescan-api"

// Unit is a CloudWatch unit.
type Unit string

// The units the service uses.
const (
	Milliseconds Unit = "Milliseconds"
	Count        Unit = "Count"
)

// Value is one metric's value in a line.
type Value struct {
	Name  string
	Unit  Unit
	Value float64
}

// Emitter writes EMF lines to one writer; it is safe for concurrent use.
type Emitter struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

// New returns an emitter that writes to w, stamping lines with now.
func New(w io.Writer, now func() time.Time) *Emitter {
	return &Emitter{w: w, now: now}
}

// Emit writes one line with values under one set of dimensions (every
// dimension is part of the set: keep them few and of low cardinality, since
// each distinct combination is a metric CloudWatch bills). A nil emitter
// emits nothing, so code paths outside Lambda need none.
func (e *Emitter) Emit(dims map[string]string, values ...Value) {
	if e == nil || len(values) == 0 {
		return
	}
	names := make([]string, 0, len(dims))
	for k := range dims {
		names = append(names, k)
	}
	slices.Sort(names)
	type metric struct {
		Name string `json:"Name"`
		Unit Unit   `json:"Unit"`
	}
	defs := make([]metric, len(values))
	line := make(map[string]any, len(dims)+len(values)+1)
	for k, v := range dims {
		line[k] = v
	}
	for i, v := range values {
		defs[i] = metric{v.Name, v.Unit}
		line[v.Name] = v.Value
	}
	line["_aws"] = map[string]any{
		"Timestamp": e.now().UnixMilli(),
		"CloudWatchMetrics": []map[string]any{{
			"Namespace":  Namespace,
			"Dimensions": [][]string{names},
			"Metrics":    defs,
		}},
	}
	b, err := json.Marshal(line)
	if err != nil {
		return // only strings and numbers: cannot happen
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.w.Write(append(b, '\n'))
}

// Now is the emitter's clock (the zero time for a nil emitter): what
// Since measures from.
func (e *Emitter) Now() time.Time {
	if e == nil {
		return time.Time{}
	}
	return e.now()
}

// Since is the time from start to now in milliseconds, as a metric value.
func (e *Emitter) Since(start time.Time) float64 {
	if e == nil {
		return 0
	}
	return float64(e.now().Sub(start).Microseconds()) / 1000
}
