package delivery_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// TestListsPage reads the endpoints (with the company's number) and an
// endpoint's attempt log (uncounted, all or one outcome) in pages of two,
// by token and by number.
func TestListsPage(t *testing.T) {
	st := testenv.NewStore(t)
	tb := ddb.New(st.Client(), st.TableName())
	ctx := context.Background()
	var first schema.WebhookEndpoint
	for c := int64(1); c <= 2; c++ {
		for i := range 5 {
			ep, err := st.Deliveries.CreateWebhook(ctx, schema.WebhookEndpoint{ID: delivery.NewWebhookID(), CompanyID: c,
				URL: fmt.Sprintf("https://hooks.example/%d/%d", c, i), Types: []string{"scan_completed"}, Active: true})
			if err != nil {
				t.Fatal(err)
			}
			if c == 1 && i == 0 {
				first = ep
			}
		}
	}
	hooks := testenv.Pages(t, 2, testenv.Total(5), func(q page.Request) (page.Page[schema.WebhookEndpoint], error) {
		return st.Deliveries.ListWebhooks(ctx, 1, q)
	})
	for _, h := range hooks {
		if h.CompanyID != 1 {
			t.Fatalf("another company's endpoint: %+v", h)
		}
	}
	// The log as FinishAttempt writes it: five attempts, two failed.
	for i := range 5 {
		log := schema.AttemptLog{DeliveryID: fmt.Sprintf("d%d", i), EventID: "e", EventType: "scan_completed", Attempt: 1,
			At: fmt.Sprintf("2026-01-0%dT00:00:00Z", i+1), Outcome: delivery.AttemptSucceeded}
		if i%2 == 1 {
			log.Outcome = delivery.AttemptFailed
		}
		sk := fmt.Sprintf("%s#%s#001", log.At, log.DeliveryID)
		log.Key = ddb.Key{PK: schema.AttemptLogPK(1, first.ID), SK: sk}
		log.GSI1PK, log.GSI1SK = schema.AttemptLogPK(1, first.ID)+"#"+log.Outcome, sk
		if err := tb.PutItem(ctx, log, nil); err != nil {
			t.Fatal(err)
		}
	}
	all := testenv.Pages(t, 2, nil, func(q page.Request) (page.Page[schema.AttemptLog], error) {
		return st.Deliveries.ListAttempts(ctx, 1, first.ID, "", q)
	})
	if len(all) != 5 || all[0].DeliveryID != "d4" {
		t.Fatalf("the log, newest first: %+v", all)
	}
	if failed := testenv.Pages(t, 1, nil, func(q page.Request) (page.Page[schema.AttemptLog], error) {
		return st.Deliveries.ListAttempts(ctx, 1, first.ID, delivery.AttemptFailed, q)
	}); len(failed) != 2 {
		t.Fatalf("failed attempts: %+v", failed)
	}
}
