package webhooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// test sends a signed webhook_test event to the endpoint now and answers
// what came of it as a class (webhook.Outcome*), never the error's text.
// It is not recorded in the delivery log; the audit log records it.
func (h handlers) test(w http.ResponseWriter, r *http.Request) error {
	ep, err := h.load(r)
	if err != nil {
		return err
	}
	now := h.now()
	id := "test_" + delivery.NewWebhookID()
	payload, err := json.Marshal(notify.Payload{
		Type: "webhook_test", ID: id, CreatedAt: now.UTC().Format(time.RFC3339), CompanyID: ep.CompanyID,
		Data: json.RawMessage(fmt.Sprintf(`{"webhook_id":%q}`, ep.ID)),
	})
	if err != nil {
		return err
	}
	body, err := h.dispatch.TestBody(ep, payload)
	if err != nil {
		return err
	}
	res, err := h.dispatch.Send(r.Context(), ep, id, body)
	if err != nil {
		return err
	}
	outcome := res.Outcome()
	out := map[string]any{
		"status": "ok", "event_id": id, "delivered": res.Delivered(), "latency_ms": res.Latency.Milliseconds(),
		"outcome": outcome, "status_code": nil,
	}
	changes := map[string]ledger.Change{"event_id": {After: id}, "outcome": {After: outcome}}
	if res.StatusCode != 0 {
		out["status_code"] = res.StatusCode
		changes["status_code"] = ledger.Change{After: res.StatusCode}
	}
	err = h.store.Ledger.Audit(r.Context(), ep.CompanyID, ledger.AuditEntry{Action: "webhook.test", TargetType: "webhook", TargetID: ep.ID, Changes: changes})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

type attemptView struct {
	DeliveryID  string  `json:"delivery_id"`
	EventID     string  `json:"event_id"`
	EventType   string  `json:"event_type"`
	Attempt     int     `json:"attempt"`
	AttemptedAt string  `json:"attempted_at"`
	Outcome     string  `json:"outcome"`
	StatusCode  *int    `json:"status_code"`
	LatencyMS   int64   `json:"latency_ms"`
	Error       *string `json:"error"`
	NextRetryAt *string `json:"next_retry_at"`
}

func (h handlers) deliveries(w http.ResponseWriter, r *http.Request) error {
	ep, err := h.load(r)
	if err != nil {
		return err
	}
	q, err := paging(r)
	if err != nil {
		return err
	}
	outcome := r.URL.Query().Get("status")
	if outcome != "" && outcome != delivery.AttemptSucceeded && outcome != delivery.AttemptFailed {
		return httpapi.Invalid("status must be succeeded or failed")
	}
	log, err := h.store.Deliveries.ListAttempts(r.Context(), ep.CompanyID, ep.ID, outcome, q.Query())
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, q, httpapi.List{Rows: "deliveries", PageSize: true, NullNext: true}, page.Map(log, attemptViewOf))
}

// attemptViewOf is how the log shows one attempt.
func attemptViewOf(a schema.AttemptLog) attemptView {
	v := attemptView{DeliveryID: a.DeliveryID, EventID: a.EventID, EventType: a.EventType, Attempt: a.Attempt,
		AttemptedAt: apiTime(a.At), Outcome: a.Outcome, LatencyMS: a.LatencyMS, Error: nullable(a.Error)}
	if a.StatusCode != 0 {
		v.StatusCode = &a.StatusCode
	}
	if a.NextRetryAt != "" {
		t := apiTime(a.NextRetryAt)
		v.NextRetryAt = &t
	}
	return v
}

var deliveryIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// redeliver sends one of the endpoint's deliveries again now.
func (h handlers) redeliver(w http.ResponseWriter, r *http.Request) error {
	ep, err := h.load(r)
	if err != nil {
		return err
	}
	id := r.PathValue("delivery_id")
	if !deliveryIDPattern.MatchString(id) {
		return errDeliveryNotFound
	}
	del, err := h.store.Deliveries.GetDelivery(r.Context(), ep.CompanyID, id)
	if errors.Is(err, ddb.ErrNotFound) || err == nil && (del.Channel != delivery.ChannelWebhook || del.Recipient != ep.ID) {
		return errDeliveryNotFound
	}
	if err != nil {
		return err
	}
	del, err = h.dispatch.Redeliver(r.Context(), ep.CompanyID, id)
	if errors.Is(err, ddb.ErrConflict) {
		return httpapi.Conflict("The delivery is being sent right now; try again in a few minutes")
	}
	if err != nil {
		return err
	}
	err = h.store.Ledger.Audit(r.Context(), ep.CompanyID, ledger.AuditEntry{
		Action: "webhook.redeliver", TargetType: "webhook", TargetID: ep.ID,
		Changes: map[string]ledger.Change{"delivery_id": {After: del.ID}, "state": {After: del.State}},
	})
	if err != nil {
		return err
	}
	out := map[string]any{
		"delivery_id": del.ID, "event_id": del.EventID, "event_type": del.EventType, "state": del.State,
		"attempts": del.Attempts, "last_status_code": nil, "next_attempt_at": nil,
	}
	if del.LastStatus != 0 {
		out["last_status_code"] = del.LastStatus
	}
	if del.NextAttemptAt != "" {
		out["next_attempt_at"] = apiTime(del.NextAttemptAt)
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "delivery": out})
}
