// Package deliveryengine delivers notification events: the outbox items that
// write paths record in the same transaction as their change (store.Event)
// reach Dispatch through the table's DynamoDB stream (the dispatcher
// function in AWS, a stream poller locally). For each event it resolves
// the recipients from the effective notification settings and their
// filters (shared/eventfilter), claims one delivery per recipient with a
// conditional write (the idempotency check: an event delivered twice by
// the stream is sent once), and sends a signed webhook, a chat message
// (Slack, Teams: shared/chatmsg) or an email. Failed attempts are retried with exponential
// backoff and jitter by RunDue, which the scheduler function (the dev
// server's timer locally) calls; the webhooks routes send one delivery
// again with Redeliver.
package deliveryengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/acme/codescan-api/shared/mail"
	"github.com/acme/codescan-api/shared/metrics"
	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/webhook"
)

// Backoff is the retry schedule: attempt n waits Base*2^(n-1), at most Max,
// with equal jitter (half fixed, half random), or the receiver's
// Retry-After; no attempt starts more than Horizon after the first.
type Backoff struct {
	Base    time.Duration
	Max     time.Duration
	Horizon time.Duration
}

// DefaultBackoff retries for a little over a day: 30 s doubling up to 6 h.
var DefaultBackoff = Backoff{Base: 30 * time.Second, Max: 6 * time.Hour, Horizon: 26 * time.Hour}

// DisableAfter is how long an endpoint may fail without a single success
// before it is disabled (and the company's admins are told by email).
const DisableAfter = 72 * time.Hour

// DefaultLease is how long a claimed delivery belongs to its sender; after
// it the timer takes the delivery over (its sender died).
const DefaultLease = 2 * time.Minute

// Engine sends deliveries.
type Engine struct {
	Store    Store
	Webhooks *webhook.Client
	Mail     mail.Sender // nil where no email is sent (the webhooks routes)
	Sealer   secrets.Sealer
	// AppURL is the web application's base URL, for links in emails.
	AppURL  string
	Backoff Backoff
	Lease   time.Duration // DefaultLease when zero
	Log     *slog.Logger
	// Metrics receives one line per attempt (see emit); nil emits none.
	Metrics *metrics.Emitter
	// Outbound are the integrations on other systems events are delivered
	// to beside people and endpoints (pull-request decoration, tickets);
	// none where none is (the webhooks routes).
	Outbound []outbound.Channel
	// Now is the clock of claims, leases, attempts and retries (time.Now
	// when nil; tests set it). Latencies are measured on the wall clock.
	Now func() time.Time
}

func (d *Engine) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

func (d *Engine) lease() time.Duration {
	if d.Lease <= 0 {
		return DefaultLease
	}
	return d.Lease
}

// Dispatch delivers each event to its recipients. It returns, by index, the
// events that could not be handed over completely (their recipients are
// retried when the stream delivers them again); a delivery that fails at
// the receiver is not such a failure: it is retried on its own schedule.
func (d *Engine) Dispatch(ctx context.Context, events []schema.Event) map[int]error {
	failed := map[int]error{}
	for i, ev := range events {
		if err := d.dispatchOne(ctx, ev); err != nil {
			d.Log.Error("dispatch", "event_id", ev.ID, "type", ev.Type, "error", err.Error())
			failed[i] = err
		}
	}
	return failed
}

// recipient is one delivery target of an event, with the user or endpoint
// that recipients read, so a first attempt does not read it again.
type recipient struct {
	channel string // store.ChannelEmail or store.ChannelWebhook
	id      string // user id or endpoint id
	known
}

// known is a delivery's recipient as already read: a user, an endpoint, or
// neither (a retry or a redelivery, hours later, reads it afresh).
type known struct {
	user     *schema.User
	endpoint *schema.WebhookEndpoint
}

func (d *Engine) dispatchOne(ctx context.Context, ev schema.Event) error {
	sent := d.sendOutbound(ctx, ev)
	if ev.Type == pullrequest.EventType {
		return sent // for decoration only
	}
	var recent error
	if _, ok := notify.Lookup(ev.Type); ok {
		if ev.CreatedAt.IsZero() {
			ev.CreatedAt = d.now()
		}
		recent = d.Store.Deliveries.RecordRecentEvent(ctx, ev) // what the filter dry run reads
	}
	return errors.Join(sent, recent, d.notify(ctx, ev))
}

// notify delivers an event to the people and endpoints that asked for it.
func (d *Engine) notify(ctx context.Context, ev schema.Event) error {
	var rcpts []recipient
	var err error
	v := &view{ev: ev}
	if t, ok := notify.Lookup(ev.Type); ok {
		rcpts, err = d.recipients(ctx, t, v)
	} else if ev.Type == notify.TypeWebhookDisabled {
		rcpts, err = d.admins(ctx, ev.CompanyID, ev.CreatedAt)
	} else {
		d.Log.Warn("dispatch: unknown event type, dropped", "event_id", ev.ID, "type", ev.Type)
		return nil
	}
	if err != nil {
		return err
	}
	payload, err := notify.PayloadOf(ev)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range rcpts {
		body := payload
		if r.endpoint != nil && r.endpoint.Chat() {
			if body, err = d.chatBody(ctx, v, r.endpoint.Kind, payload); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		del := schema.Delivery{
			ID: delivery.DeliveryID(ev.ID, r.channel, r.id), CompanyID: ev.CompanyID, EventID: ev.ID, EventType: ev.Type,
			Channel: r.channel, Recipient: r.id, Payload: string(body),
		}
		del, claimed, err := d.Store.Deliveries.ClaimDelivery(ctx, del, d.now(), d.lease())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !claimed {
			continue // sent, scheduled, or being sent: never twice
		}
		if _, err := d.attempt(ctx, del, r.known); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sendOutbound claims and attempts each job the event asks of the outbound
// channels.
func (d *Engine) sendOutbound(ctx context.Context, ev schema.Event) error {
	var errs []error
	for _, ch := range d.Outbound {
		jobs, err := ch.Jobs(ctx, ev)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ch.Name(), err))
			continue
		}
		for _, job := range jobs {
			errs = append(errs, d.sendJob(ctx, ev, ch.Name(), job))
		}
	}
	return errors.Join(errs...)
}

// sendJob claims one outbound job as a delivery and, when this call won
// the claim, attempts it.
func (d *Engine) sendJob(ctx context.Context, ev schema.Event, channel string, job outbound.Job) error {
	del := schema.Delivery{ID: delivery.DeliveryID(job.Key, channel, job.Recipient), CompanyID: ev.CompanyID,
		EventID: ev.ID, EventType: ev.Type, Channel: channel, Recipient: job.Recipient, Payload: string(job.Payload)}
	del, claimed, err := d.Store.Deliveries.ClaimDelivery(ctx, del, d.now(), d.lease())
	if err != nil || !claimed {
		return err
	}
	_, err = d.attempt(ctx, del, known{})
	return err
}

// recipients are the active users whose effective email setting for t is
// on, and, when the company's effective webhook setting is on, its active
// endpoints subscribed to t; of both, only those that existed (and, for an
// endpoint, received events) when the event was recorded: a new receiver
// gets no backlog; and only those whose filter (a user's email preference
// of t, an endpoint's) selects the event.
func (d *Engine) recipients(ctx context.Context, t notify.Type, v *view) ([]recipient, error) {
	companyID, at := v.ev.CompanyID, v.ev.CreatedAt
	company, users, err := d.Store.Deliveries.CompanyNotificationSettings(ctx, companyID)
	if err != nil {
		return nil, err
	}
	var out []recipient
	all, err := d.Store.Tenancy.AllUsers(ctx, companyID)
	if err != nil {
		return nil, err
	}
	for _, u := range all {
		if !u.Active || u.Email == "" || !existedAt(u, at) {
			continue
		}
		pref := users[u.ID][t.Code]
		if email, _ := notify.Effective(t, company[t.Code], pref); !email {
			continue
		}
		id := strconv.FormatInt(u.ID, 10)
		if ok, err := d.selects(ctx, v, pref.Filter, "user:"+id); err != nil {
			return nil, err
		} else if ok {
			out = append(out, recipient{delivery.ChannelEmail, id, known{user: &u}})
		}
	}
	if _, hooks := notify.Effective(t, company[t.Code], schema.NotificationSetting{}); !hooks {
		return out, nil
	}
	endpoints, err := d.Store.Deliveries.AllWebhooks(ctx, companyID)
	if err != nil {
		return nil, err
	}
	for _, e := range endpoints {
		if !e.Active || !slices.Contains(e.Types, t.Code) || !e.Receives(at) {
			continue
		}
		if ok, err := d.selects(ctx, v, e.Filter, "webhook:"+e.ID); err != nil {
			return nil, err
		} else if ok {
			out = append(out, recipient{delivery.ChannelWebhook, e.ID, known{endpoint: &e}})
		}
	}
	return out, nil
}

// admins are the recipients of notify.TypeWebhookDisabled: the company's
// active admins that existed when the event was recorded at.
func (d *Engine) admins(ctx context.Context, companyID int64, at time.Time) ([]recipient, error) {
	all, err := d.Store.Tenancy.AllUsers(ctx, companyID)
	if err != nil {
		return nil, err
	}
	var out []recipient
	for _, u := range all {
		if u.Active && u.IsAdmin && u.Email != "" && existedAt(u, at) {
			out = append(out, recipient{delivery.ChannelEmail, strconv.FormatInt(u.ID, 10), known{user: &u}})
		}
	}
	return out, nil
}

// existedAt reports whether the user was created by t (their creation time
// has whole seconds: one created in the event's second counts as existing).
func existedAt(u schema.User, t time.Time) bool {
	created, err := time.Parse(time.RFC3339Nano, u.CreatedAt)
	return err != nil || !t.Truncate(time.Second).Before(created)
}

// RunDue attempts the deliveries that are due: retries whose time has come
// and claims whose sender died. It returns how many it attempted.
func (d *Engine) RunDue(ctx context.Context) (int, error) {
	due, err := d.Store.Deliveries.DueDeliveries(ctx, d.now(), 100)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, del := range due {
		del, ok, err := d.Store.Deliveries.ReclaimDelivery(ctx, del.CompanyID, del.ID, d.now(), d.lease(), false)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		n++
		if _, err := d.attempt(ctx, del, known{}); err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// Redeliver sends a webhook delivery again now, whatever its state (unless
// it is being sent right now), and returns it after the attempt.
func (d *Engine) Redeliver(ctx context.Context, companyID int64, id string) (schema.Delivery, error) {
	del, ok, err := d.Store.Deliveries.ReclaimDelivery(ctx, companyID, id, d.now(), d.lease(), true)
	if err != nil {
		return schema.Delivery{}, err
	}
	if !ok {
		return schema.Delivery{}, ddb.ErrConflict
	}
	return d.attempt(ctx, del, known{})
}

// attempt tries a claimed delivery once and records the outcome.
func (d *Engine) attempt(ctx context.Context, del schema.Delivery, k known) (schema.Delivery, error) {
	var a delivery.Attempt
	var retryAfter time.Duration
	retryable, gone := false, false
	switch del.Channel {
	case delivery.ChannelWebhook:
		res, ep, err := d.sendWebhook(ctx, del, k.endpoint)
		if err != nil {
			return schema.Delivery{}, err
		}
		a = delivery.Attempt{At: d.now(), StatusCode: res.StatusCode, Latency: res.Latency, Delivered: res.Delivered()}
		if res.Err != nil {
			a.Error = res.Outcome() // a class: the error's text names addresses and ports
		}
		if res.Reason != "" {
			a.Error = res.Reason // a chat receiver's error code (no_service, invalid_payload, ...)
		}
		retryable, retryAfter = !a.Delivered && res.Retryable(), res.RetryAfter
		gone = errors.Is(res.Err, errNoRecipient)
		if ep != nil && ep.Chat() && res.Gone() {
			gone = true
			if err := d.disableEndpoint(ctx, *ep, d.now(), fmt.Sprintf("the %s destination answered %d %s: it no longer exists", ep.Kind, res.StatusCode, res.Reason)); err != nil {
				d.Log.Error("webhook endpoint bookkeeping", "endpoint", ep.ID, "error", err.Error())
			}
		} else if ep != nil {
			if err := d.trackEndpoint(ctx, *ep, a.Delivered); err != nil {
				d.Log.Error("webhook endpoint bookkeeping", "endpoint", ep.ID, "error", err.Error())
			}
		}
	case delivery.ChannelEmail:
		start := time.Now()
		err := d.sendEmail(ctx, del, k.user)
		a = delivery.Attempt{At: d.now(), Latency: time.Since(start), Delivered: err == nil}
		if err != nil {
			a.Error = err.Error()
			gone = errors.Is(err, errNoRecipient)
			retryable = !gone
		}
	default:
		a, retryable, retryAfter, gone = d.outboundAttempt(ctx, del)
	}
	if retryable {
		a.Next = d.next(del, a.At, retryAfter)
	}
	d.emit(del.Channel, a, gone)
	return d.Store.Deliveries.FinishAttempt(ctx, del, a)
}

// emit writes an attempt's metrics: one attempt and its latency, by
// channel (email, webhook) and outcome (delivered; retry-scheduled; failed
// for good; disabled: the recipient is disabled or gone, dropped).
func (d *Engine) emit(channel string, a delivery.Attempt, gone bool) {
	outcome := metrics.OutcomeFailed
	switch {
	case a.Delivered:
		outcome = metrics.OutcomeDelivered
	case gone:
		outcome = metrics.OutcomeDisabled
	case !a.Next.IsZero():
		outcome = metrics.OutcomeRetryScheduled
	}
	switch channel {
	case delivery.ChannelEmail:
		channel = metrics.ChannelEmail
	case delivery.ChannelWebhook:
		channel = metrics.ChannelWebhook
	}
	d.Metrics.Emit(map[string]string{"Service": "delivery", "Channel": channel, "Outcome": outcome},
		metrics.Value{Name: metrics.DeliveryAttempts, Unit: metrics.Count, Value: 1},
		metrics.Value{Name: metrics.DeliveryLatency, Unit: metrics.Milliseconds, Value: float64(a.Latency.Microseconds()) / 1000})
}

// next is when to try again after the attempt at now, or zero when the
// retry horizon has passed.
func (d *Engine) next(del schema.Delivery, now time.Time, retryAfter time.Duration) time.Time {
	b := d.Backoff
	first := now
	if del.FirstAttemptAt != "" {
		if t, err := time.Parse(time.RFC3339Nano, del.FirstAttemptAt); err == nil {
			first = t
		}
	}
	wait := b.Base << min(del.Attempts, 30) // Attempts counts the earlier attempts
	if wait <= 0 || wait > b.Max {
		wait = b.Max
	}
	wait = wait/2 + rand.N(wait/2+1)
	if retryAfter > 0 {
		wait = min(retryAfter, 24*time.Hour)
	}
	at := now.Add(wait)
	if at.Sub(first) > b.Horizon {
		return time.Time{}
	}
	return at
}

var errNoRecipient = errors.New("recipient is gone or inactive")

// outboundAttempt is one attempt of an outbound channel's delivery, as
// attempt records it: the attempt, whether to retry and after how long,
// and whether there is nothing left to do (no such channel here, or its
// subject is gone).
func (d *Engine) outboundAttempt(ctx context.Context, del schema.Delivery) (delivery.Attempt, bool, time.Duration, bool) {
	i := slices.IndexFunc(d.Outbound, func(ch outbound.Channel) bool { return ch.Name() == del.Channel })
	if i < 0 {
		return delivery.Attempt{At: d.now(), Error: "no channel " + del.Channel + " here"}, false, 0, true
	}
	start := time.Now()
	o := d.Outbound[i].Attempt(ctx, del.CompanyID, del.Recipient, json.RawMessage(del.Payload))
	a := delivery.Attempt{At: d.now(), StatusCode: o.StatusCode, Latency: time.Since(start), Delivered: o.Delivered, Error: o.Err}
	return a, o.Retryable && !o.Delivered, o.RetryAfter, o.Gone
}

// sendWebhook signs and posts the delivery's payload to its endpoint (read
// unless given), with the current secret and, during a rotation, the
// previous one.
func (d *Engine) sendWebhook(ctx context.Context, del schema.Delivery, read *schema.WebhookEndpoint) (webhook.Result, *schema.WebhookEndpoint, error) {
	var ep schema.WebhookEndpoint
	if read != nil {
		ep = *read
	} else {
		var err error
		ep, err = d.Store.Deliveries.GetWebhook(ctx, del.CompanyID, del.Recipient)
		if errors.Is(err, ddb.ErrNotFound) {
			return webhook.Result{Err: errNoRecipient}, nil, nil
		}
		if err != nil {
			return webhook.Result{}, nil, err
		}
	}
	if !ep.Active {
		return webhook.Result{Err: errNoRecipient}, nil, nil
	}
	res, err := d.Send(ctx, ep, del.EventID, []byte(del.Payload))
	if err != nil {
		return webhook.Result{}, nil, err
	}
	return res, &ep, nil
}

// SigningSecrets opens an endpoint's current secret and, until it expires,
// the previous one.
func (d *Engine) SigningSecrets(ctx context.Context, ep schema.WebhookEndpoint, now time.Time) ([]string, error) {
	record := delivery.WebhookSecretRecord(ep.CompanyID, ep.ID)
	cur, err := d.Sealer.Open(ctx, ep.SealedSecret, record)
	if err != nil {
		return nil, fmt.Errorf("open webhook secret: %w", err)
	}
	out := []string{cur}
	if until, err := time.Parse(time.RFC3339Nano, ep.PrevSecretUntil); err == nil && now.Before(until) && ep.PrevSealedSecret != "" {
		prev, err := d.Sealer.Open(ctx, ep.PrevSealedSecret, record)
		if err != nil {
			return nil, fmt.Errorf("open previous webhook secret: %w", err)
		}
		out = append(out, prev)
	}
	return out, nil
}

// trackEndpoint keeps the endpoint's failing-since mark and disables an
// endpoint that has failed for DisableAfter, telling the admins.
func (d *Engine) trackEndpoint(ctx context.Context, ep schema.WebhookEndpoint, delivered bool) error {
	now := d.now()
	switch {
	case delivered && ep.FailingSince != "":
		empty := ""
		_, err := d.Store.Deliveries.UpdateWebhook(ctx, ep.CompanyID, ep.ID, delivery.WebhookChange{FailingSince: &empty})
		return err
	case delivered:
		return nil
	case ep.FailingSince == "":
		since := ddb.SortableTime(now)
		_, err := d.Store.Deliveries.UpdateWebhook(ctx, ep.CompanyID, ep.ID, delivery.WebhookChange{FailingSince: &since})
		return err
	}
	since, err := time.Parse(time.RFC3339Nano, ep.FailingSince)
	if err != nil || now.Sub(since) < DisableAfter {
		return err
	}
	return d.disableEndpoint(ctx, ep, since, fmt.Sprintf("every delivery failed since %s", since.UTC().Format(time.RFC3339)))
}

// disableEndpoint turns the endpoint off for reason and tells the admins
// (a webhook_disabled event, once per endpoint and since).
func (d *Engine) disableEndpoint(ctx context.Context, ep schema.WebhookEndpoint, since time.Time, reason string) error {
	now := d.now()
	off := false
	if _, err := d.Store.Deliveries.UpdateWebhook(ctx, ep.CompanyID, ep.ID, delivery.WebhookChange{Active: &off, DisabledReason: &reason}); err != nil {
		return err
	}
	return d.Store.Ledger.RecordEvent(ctx, schema.Event{
		ID: "webhook_disabled-" + ep.ID + "-" + strconv.FormatInt(since.Unix(), 10), CompanyID: ep.CompanyID,
		Type: notify.TypeWebhookDisabled, CreatedAt: now,
		Data: mustJSON(map[string]any{"webhook_id": ep.ID, "url": ep.URL, "failing_since": since.UTC().Format(time.RFC3339), "reason": reason}),
	})
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
