package deliveryengine

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/acme/codescan-api/shared/chatmsg"
	"github.com/acme/codescan-api/shared/eventfilter"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/webhook"
)

// view is an event as filters and chat messages see it
// (eventfilter.Build), built on first use and once per event: a scan
// event's new issues are read from the store only when a chat destination
// shows them or a filter can see them.
type view struct {
	ev         schema.Event
	base, full built
}

type built struct {
	once sync.Once
	fe   eventfilter.Event
	err  error
}

func (d *Engine) viewOf(ctx context.Context, v *view, findings bool) (eventfilter.Event, error) {
	b, src := &v.base, eventfilter.Source(nil)
	if findings {
		b, src = &v.full, d.Store.Lists
	}
	b.once.Do(func() { b.fe, b.err = eventfilter.Build(ctx, src, v.ev) })
	return b.fe, b.err
}

// SeesFindings reports whether a filter expression can read a scan's new
// issues (event.new_findings, event.counts): a lexical test, so never
// wrong the unsafe way.
func SeesFindings(src string) bool {
	return strings.Contains(src, "new_findings") || strings.Contains(src, "counts")
}

// selects reports whether the filter src (of the recipient who) selects
// the event. A filter that no longer compiles, or whose evaluation fails,
// selects nothing; both are logged with the recipient, never with the
// event's text. An error is a failure to read the event's view.
func (d *Engine) selects(ctx context.Context, v *view, src, who string) (bool, error) {
	if strings.TrimSpace(src) == "" {
		return true, nil
	}
	f, err := eventfilter.Cached(src)
	if err != nil {
		d.Log.Warn("filter does not compile: event not selected", "recipient", who, "event_id", v.ev.ID)
		return false, nil
	}
	fe, err := d.viewOf(ctx, v, SeesFindings(src))
	if err != nil {
		return false, err
	}
	ok, err := f.Match(fe)
	if err != nil {
		d.Log.Warn("filter evaluation failed: event not selected", "recipient", who, "event_id", v.ev.ID, "error_class", eventfilter.Failure(err))
		return false, nil
	}
	return ok, nil
}

// chatBody is the message of a chat endpoint of kind for the event whose
// webhook payload is payload: with the event's most urgent new issues (of
// the event's urgency for a new-issue event).
func (d *Engine) chatBody(ctx context.Context, v *view, kind string, payload []byte) ([]byte, error) {
	fe, err := d.viewOf(ctx, v, true)
	if err != nil {
		return nil, err
	}
	var found []chatmsg.Finding
	only := map[string]string{"new_critical_issue": "CR", "new_high_issue": "HI"}[v.ev.Type]
	for _, f := range fe.NewFindings {
		if only == "" || f.Urgency == only {
			found = append(found, chatmsg.Finding{Urgency: f.Urgency, Title: f.Title, Path: f.Path, Line: int(f.Line), Package: f.Package})
		}
	}
	if len(found) == 0 {
		found = nil // the event's own list, if it has one
	}
	return chatmsg.Render(kind, chatmsg.Input{AppURL: d.AppURL, Payload: payload, Findings: found})
}

// Send posts one message to an endpoint now, as its kind asks: signed
// with its secrets (a webhook), or the chat body as it is (Slack, Teams:
// the sealed URL opened).
func (d *Engine) Send(ctx context.Context, ep schema.WebhookEndpoint, eventID string, body []byte) (webhook.Result, error) {
	if !ep.Chat() {
		secrets, err := d.SigningSecrets(ctx, ep, d.now())
		if err != nil {
			return webhook.Result{}, err
		}
		return d.Webhooks.Send(ctx, ep.URL, webhook.Message{ID: eventID, Payload: body, Secrets: secrets}), nil
	}
	target, err := d.ChatURL(ctx, ep)
	if err != nil {
		return webhook.Result{}, err
	}
	return d.Webhooks.Post(ctx, target, body), nil
}

// ChatURL opens a chat endpoint's sealed URL.
func (d *Engine) ChatURL(ctx context.Context, ep schema.WebhookEndpoint) (string, error) {
	u, err := d.Sealer.Open(ctx, ep.SealedSecret, delivery.WebhookSecretRecord(ep.CompanyID, ep.ID))
	if err != nil {
		return "", fmt.Errorf("open chat url: %w", err)
	}
	return u, nil
}

// TestBody is the body of a test message to ep: the webhook payload
// itself, or the chat message of it.
func (d *Engine) TestBody(ep schema.WebhookEndpoint, payload []byte) ([]byte, error) {
	if !ep.Chat() {
		return payload, nil
	}
	return chatmsg.Render(ep.Kind, chatmsg.Input{AppURL: d.AppURL, Payload: payload})
}
