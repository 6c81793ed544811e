package demo

import (
	"context"
	"encoding/json"
	"time"

	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/webhook"
)

func init() { register(50, seedDelivery) }

// DemoWebhookURL is where the demo's webhook endpoint delivers: run any
// local HTTP server there to watch deliveries (make run accepts loopback
// receivers).
const DemoWebhookURL = "http://127.0.0.1:9000/hook"

// seedDelivery adds a webhook endpoint on a local receiver, subscribed to
// scan and new-issue events, and one failed delivery in its log (so the
// log and redelivery have something to show). The endpoint's signing
// secret goes to demo.json only, for verifying local deliveries.
func seedDelivery(ctx context.Context, st *store.Store, c *Company) error {
	sealer, err := secrets.FromEnv(ctx)
	if err != nil {
		return err
	}
	ep, secret, err := demoWebhook(ctx, st, sealer, c.ID, schema.WebhookEndpoint{URL: DemoWebhookURL, Active: true,
		Types:       []string{"new_critical_issue", "new_high_issue", "scan_completed", "scan_failed", "issue_status_changed"},
		Description: "Local receiver (any HTTP server on 127.0.0.1:9000)",
	})
	if err != nil {
		return err
	}
	// A disabled endpoint nobody needs any more, for trying deletion on.
	retired, _, err := demoWebhook(ctx, st, sealer, c.ID, schema.WebhookEndpoint{URL: "http://127.0.0.1:9001/old-hook",
		Types: []string{"scan_completed"}, Description: "Retired receiver (disabled)"})
	if err != nil {
		return err
	}
	at := time.Now().Add(-time.Hour)
	eventID := "scan_failed-demo-" + ep.ID[:8]
	payload, err := json.Marshal(map[string]any{
		"type": "scan_failed", "id": eventID, "created_at": at.UTC().Format(time.RFC3339), "company_id": c.ID,
		"data": map[string]any{"scan_id": "demo", "project_id": 0, "project_name": "demo", "branch": "main", "tool": "semgrep", "failed_reason": "demo event"},
	})
	if err != nil {
		return err
	}
	del, _, err := st.Deliveries.ClaimDelivery(ctx, schema.Delivery{
		ID: delivery.DeliveryID(eventID, delivery.ChannelWebhook, ep.ID), CompanyID: c.ID, EventID: eventID, EventType: "scan_failed",
		Channel: delivery.ChannelWebhook, Recipient: ep.ID, Payload: string(payload),
	}, at, time.Minute)
	if err != nil {
		return err
	}
	if _, err := st.Deliveries.FinishAttempt(ctx, del, delivery.Attempt{At: at, StatusCode: 503, Latency: 42 * time.Millisecond, Error: "demo: receiver unavailable"}); err != nil {
		return err
	}
	c.Resources["webhook_ids"] = []string{ep.ID}
	c.Resources["retired_webhook_ids"] = []string{retired.ID}
	c.Resources["webhook_delivery_ids"] = []string{del.ID}
	c.Resources["webhook_secret"] = secret
	return nil
}

// demoWebhook creates the endpoint ep of the company with a new signing
// secret, which it returns.
func demoWebhook(ctx context.Context, st *store.Store, sealer secrets.Sealer, company int64, ep schema.WebhookEndpoint) (schema.WebhookEndpoint, string, error) {
	secret, err := webhook.NewSecret()
	if err != nil {
		return schema.WebhookEndpoint{}, "", err
	}
	ep.ID, ep.CompanyID = delivery.NewWebhookID(), company
	if ep.SealedSecret, err = sealer.Seal(ctx, secret, delivery.WebhookSecretRecord(company, ep.ID)); err != nil {
		return schema.WebhookEndpoint{}, "", err
	}
	ep, err = st.Deliveries.CreateWebhook(ctx, ep)
	return ep, secret, err
}
