package metrics

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// A line is one JSON object that declares its metrics under _aws and
// carries the dimensions and values at its top level, as EMF requires.
func TestEmitWritesOneEMFLine(t *testing.T) {
	var buf bytes.Buffer
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	e := New(&buf, func() time.Time { return at })
	e.Emit(map[string]string{"Service": "ingester", "Engine": "sarif"},
		Value{"IngestDuration", Milliseconds, 1234.5}, Value{"IngestResults", Count, 25000})
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines: %q", len(lines), buf.String())
	}
	var got struct {
		AWS struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
		Service, Engine string
		IngestDuration  float64
		IngestResults   float64
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatal(err)
	}
	cw := got.AWS.CloudWatchMetrics
	if got.AWS.Timestamp != at.UnixMilli() || len(cw) != 1 || cw[0].Namespace != Namespace ||
		len(cw[0].Dimensions) != 1 || strings.Join(cw[0].Dimensions[0], ",") != "Engine,Service" ||
		len(cw[0].Metrics) != 2 || cw[0].Metrics[0].Name != "IngestDuration" || cw[0].Metrics[0].Unit != "Milliseconds" {
		t.Errorf("metadata: %+v", got.AWS)
	}
	if got.Service != "ingester" || got.Engine != "sarif" || got.IngestDuration != 1234.5 || got.IngestResults != 25000 {
		t.Errorf("values: %+v", got)
	}
}

// Concurrent emits never interleave within a line; a nil emitter is silent.
func TestConcurrentAndNil(t *testing.T) {
	var buf bytes.Buffer
	e := New(&buf, time.Now)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.Emit(map[string]string{"Service": "x"}, Value{"N", Count, float64(i)})
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 50 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("not one JSON object: %q", l)
		}
	}
	var none *Emitter
	none.Emit(map[string]string{"Service": "x"}, Value{"N", Count, 1})
	if none.Since(time.Now()) != 0 {
		t.Error("nil emitter measured time")
	}
}
