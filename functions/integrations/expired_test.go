package integrations_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// storedEvent reads an outbox item, or reports false.
func storedEvent(t *testing.T, st *store.Store, companyID int64, id string) (schema.EventItem, bool) {
	t.Helper()
	res, err := st.Client().GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(st.TableName()), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)}, "SK": &types.AttributeValueMemberS{Value: "EVENT#" + id},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Item == nil {
		return schema.EventItem{}, false
	}
	ev, ok, err := schema.DecodeEventImage(res.Item)
	if err != nil || !ok {
		t.Fatalf("outbox item: %v", err)
	}
	return schema.EventItem{ID: ev.ID, CompanyID: ev.CompanyID, Type: ev.Type, Data: string(ev.Data)}, true
}

// Re-verification with the stored token that the host rejects marks the
// integration expired and records integration_expired in the same write.
func TestRejectedStoredTokenExpiresTheIntegration(t *testing.T) {
	t.Parallel()
	w := setup(t)
	live := w.integration(t, w.acme.ID, schema.Integration{
		Name: "Acme GHES 2", AccountID: fmt.Sprint(ciBotID), AccountName: "acme-ci-bot", BaseURL: "https://ghes.acme.example",
	}, badToken)
	r := w.patch(t, w.manager, live.UUID, fmt.Sprintf(`{"base_url":%q,"gateway_prefix":"/api/v3"}`, w.host.URL))
	if r.Status != 422 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	got := w.stored(t, live)
	if !got.Expired || got.Revision != live.Revision+1 || got.BaseURL != live.BaseURL {
		t.Fatalf("stored %+v: want expired, the address unchanged", got)
	}
	id := fmt.Sprintf("integration_expired-%s-%d", live.UUID, live.Revision)
	ev, ok := storedEvent(t, w.env.Store, w.acme.ID, id)
	if !ok || ev.Type != "integration_expired" {
		t.Fatalf("event %s: %v %+v", id, ok, ev)
	}
	var data map[string]string
	if err := json.Unmarshal([]byte(ev.Data), &data); err != nil || data["integration_uuid"] != live.UUID ||
		data["name"] != "Acme GHES 2" || data["reason"] == "" || data["base_url"] != live.BaseURL {
		t.Fatalf("data %s (%v)", ev.Data, err)
	}
	w.noSecrets(t, got)

	// Already expired: a second rejection records nothing new.
	w.patch(t, w.manager, live.UUID, fmt.Sprintf(`{"base_url":%q,"gateway_prefix":"/api/v3"}`, w.host.URL))
	if again := w.stored(t, live); again.Revision != got.Revision {
		t.Errorf("second rejection changed the integration (revision %d)", again.Revision)
	}
	// A rejected new token is the caller's typo, not an expiry.
	other := w.integration(t, w.acme.ID, schema.Integration{
		Name: "Acme GHES 3", AccountID: fmt.Sprint(ciBotID), AccountName: "acme-ci-bot", BaseURL: w.host.URL, GatewayPrefix: "/api/v3",
	}, oldToken)
	w.patch(t, w.manager, other.UUID, `{"secure_token":"`+badToken+`"}`)
	if s := w.stored(t, other); s.Expired {
		t.Error("a rejected new token expired the integration")
	}
}

// The event is written if and only if the change is.
func TestOutboxEventOnlyWithItsChange(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ctx := context.Background()
	live := w.integration(t, w.acme.ID, schema.Integration{Name: "X", AccountID: "1", AccountName: "x", BaseURL: "https://x.example"}, oldToken)
	ev := schema.Event{ID: "integration_expired-tx-1", CompanyID: w.acme.ID, Type: "integration_expired", CreatedAt: time.Now(), Data: json.RawMessage(`{"integration_uuid":"x"}`)}
	if err := w.env.Store.Catalog.MarkIntegrationExpired(ctx, w.acme.ID, live.UUID, live.Revision+5, ev); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("stale revision: %v", err)
	}
	if _, ok := storedEvent(t, w.env.Store, w.acme.ID, ev.ID); ok {
		t.Fatal("event written without its change")
	}
	if s := w.stored(t, live); s.Expired || s.Revision != live.Revision {
		t.Fatalf("integration changed: %+v", s)
	}
	bad := ev
	bad.ID, bad.Data = "integration_expired-tx-2", json.RawMessage(`[1]`)
	if err := w.env.Store.Catalog.MarkIntegrationExpired(ctx, w.acme.ID, live.UUID, live.Revision, bad); err == nil {
		t.Fatal("an event with a non-object data was accepted")
	}
	if s := w.stored(t, live); s.Expired {
		t.Fatal("change written without its event")
	}
	if err := w.env.Store.Catalog.MarkIntegrationExpired(ctx, w.acme.ID, live.UUID, live.Revision, ev); err != nil {
		t.Fatal(err)
	}
	if _, ok := storedEvent(t, w.env.Store, w.acme.ID, ev.ID); !ok || !w.stored(t, live).Expired {
		t.Fatal("change and event not both written")
	}
}
