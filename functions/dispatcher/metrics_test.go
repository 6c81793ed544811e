package dispatcher_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/metrics"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Every attempt is one EMF line by channel and outcome with its latency:
// an email delivered, a webhook answered 500 (retry scheduled), then
// delivered; a retry whose endpoint was disabled meanwhile is dropped
// (disabled); a 400 fails for good.
func TestDeliveryMetrics(t *testing.T) {
	w := newWorld(t)
	var out bytes.Buffer
	w.d.Metrics = metrics.New(&out, time.Now)
	c := w.env.Company(t, "Metrics"+randomSuffix())
	setting(t, w.env.Store, c.ID, 0, "scan_completed", delivery.ChannelEmail, true)
	rcv := newReceiver(t, 500, 200, 500, 400)
	ep, _ := w.endpoint(t, c, rcv.URL+"/hook", "scan_completed")
	ctx := context.Background()

	run := func(ev schema.Event) {
		t.Helper()
		if failed := w.d.Dispatch(ctx, []schema.Event{ev}); len(failed) != 0 {
			t.Fatal(failed)
		}
	}
	due := func(n int) { // a minute later every retry (at most 100 ms away) is due
		t.Helper()
		w.clk.set(w.clk.now().Add(time.Minute))
		w.runDue(t, n)
	}
	run(scanCompleted(c.ID, "11111111-1d7e-4a53-9b8e-1c2d3e4f5a6b")) // email delivered, webhook 500
	due(1)                                                           // webhook 200
	setting(t, w.env.Store, c.ID, 0, "scan_completed", delivery.ChannelEmail, false)
	run(scanCompleted(c.ID, "22222222-1d7e-4a53-9b8e-1c2d3e4f5a6b")) // webhook 500
	off := false
	if _, err := w.env.Store.Deliveries.UpdateWebhook(ctx, c.ID, ep.ID, delivery.WebhookChange{Active: &off}); err != nil {
		t.Fatal(err)
	}
	due(1) // endpoint disabled: dropped
	on := true
	if _, err := w.env.Store.Deliveries.UpdateWebhook(ctx, c.ID, ep.ID, delivery.WebhookChange{Active: &on}); err != nil {
		t.Fatal(err)
	}
	run(scanCompleted(c.ID, "33333333-1d7e-4a53-9b8e-1c2d3e4f5a6b")) // webhook 400

	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			Service, Channel, Outcome string
			DeliveryAttempts          float64
			DeliveryLatency           *float64
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Service != "delivery" || m.DeliveryAttempts != 1 || m.DeliveryLatency == nil || *m.DeliveryLatency < 0 {
			t.Fatalf("line %q (%v)", l, err)
		}
		got = append(got, m.Channel+" "+m.Outcome)
	}
	want := []string{
		"email " + metrics.OutcomeDelivered, "webhook " + metrics.OutcomeRetryScheduled, "webhook " + metrics.OutcomeDelivered,
		"webhook " + metrics.OutcomeRetryScheduled, "webhook " + metrics.OutcomeDisabled, "webhook " + metrics.OutcomeFailed,
	}
	// Within one dispatch the order of recipients is the engine's: compare
	// the first two as a set.
	if len(got) == len(want) && got[0] == want[1] && got[1] == want[0] {
		got[0], got[1] = got[1], got[0]
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("attempts:\n got %v\nwant %v", got, want)
	}
}
