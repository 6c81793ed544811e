// Package webhooks lets company admins register webhook endpoints for
// notification types, rotate their signing secrets, send test events, and
// read and replay each endpoint's delivery log. Deliveries themselves are
// made by the delivery engine (shared/delivery).
package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/delivery"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/webhook"
)

// Limits and paging.
const (
	MaxDescription  = 500 // characters
	MaxTypes        = 20
	DefaultPageSize = 20
	MaxPageSize     = 100
	// RotationOverlap is how long the previous secret keeps signing after
	// a rotation.
	RotationOverlap = 24 * time.Hour
)

// EnvAllowLoopback ("true" or "1") lets endpoints use plain http and
// loopback addresses: local development and tests only.
const EnvAllowLoopback = delivery.EnvAllowLoopback

// Options are the group's dependencies beyond config.Deps.
type Options struct {
	Sealer   secrets.Sealer  // seals signing secrets
	Webhooks *webhook.Client // sends test events and redeliveries
}

// OptionsFromEnv builds Options from the environment.
func OptionsFromEnv(ctx context.Context) (Options, error) {
	sealer, err := secrets.FromEnv(ctx)
	if err != nil {
		return Options{}, err
	}
	loopback, _ := strconv.ParseBool(os.Getenv(EnvAllowLoopback))
	return Options{Sealer: sealer, Webhooks: webhook.New(webhook.Options{AllowLoopback: loopback})}, nil
}

// New returns the group's handler configured from the environment.
func New(d config.Deps) http.Handler {
	o, err := OptionsFromEnv(context.Background())
	if err != nil {
		panic(fmt.Sprintf("webhooks: %v", err))
	}
	return NewWithOptions(d, o)
}

// NewWithOptions returns the group's handler with explicit options.
func NewWithOptions(d config.Deps, o Options) http.Handler {
	h := handlers{store: d.Store, opts: o, now: d.Clock(), dispatch: &delivery.Engine{
		Store: d.Store, Webhooks: o.Webhooks, Sealer: o.Sealer, Backoff: delivery.DefaultBackoff, Log: d.Server.Log,
		Metrics: d.Metrics, Now: d.Now,
	}}
	return d.Server.Group(routes.GroupWebhooks, map[string]httpapi.HandlerFunc{
		"POST /webhooks":                                                 h.create,
		"GET /webhooks":                                                  h.list,
		"GET /webhooks/{webhook_id}":                                     h.get,
		"PATCH /webhooks/{webhook_id}":                                   h.update,
		"DELETE /webhooks/{webhook_id}":                                  h.delete,
		"POST /webhooks/{webhook_id}/rotate-secret":                      h.rotate,
		"POST /webhooks/{webhook_id}/test":                               h.test,
		"GET /webhooks/{webhook_id}/deliveries":                          h.deliveries,
		"POST /webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": h.redeliver,
	})
}

type handlers struct {
	store    Store
	opts     Options
	dispatch *delivery.Engine
	now      func() time.Time
}

var (
	errNotFound         = httpapi.Errorf(http.StatusNotFound, "Webhook not found")
	errDeliveryNotFound = httpapi.Errorf(http.StatusNotFound, "Delivery not found")
)

// view is an endpoint as the API shows it: never its secret.
type view struct {
	ID                   string   `json:"id"`
	URL                  string   `json:"url"`
	Types                []string `json:"types"`
	Description          string   `json:"description"`
	Active               bool     `json:"active"`
	DisabledReason       *string  `json:"disabled_reason"`
	FailingSince         *string  `json:"failing_since"`
	PreviousSecretExpiry *string  `json:"previous_secret_expires_at"`
	CreatedAt            string   `json:"created_at"`
	UpdatedAt            string   `json:"updated_at"`
}

// viewOf shows the previous secret's expiry while it has not passed at now.
func viewOf(w store.WebhookEndpoint, now time.Time) view {
	v := view{ID: w.ID, URL: w.URL, Types: w.Types, Description: w.Description, Active: w.Active,
		CreatedAt: apiTime(w.CreatedAt), UpdatedAt: apiTime(w.UpdatedAt)}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		t := apiTime(s)
		return &t
	}
	if w.DisabledReason != "" {
		v.DisabledReason = &w.DisabledReason
	}
	v.FailingSince = opt(w.FailingSince)
	if until, err := time.Parse(time.RFC3339Nano, w.PrevSecretUntil); err == nil && now.Before(until) {
		v.PreviousSecretExpiry = opt(w.PrevSecretUntil)
	}
	if v.Types == nil {
		v.Types = []string{}
	}
	return v
}

// apiTime turns a stored time into the API's RFC 3339 seconds form.
func apiTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format(time.RFC3339)
}

// input is a validated create or update body; nil members are absent.
type input struct {
	url, description *string
	types            *[]string
	active           *bool
}

// parse reads a body of the allowed members, each of its type.
func (h handlers) parse(r *http.Request, allowed ...string) (input, error) {
	body, err := httpapi.DecodeJSONObject(r)
	if err != nil {
		return input{}, err
	}
	var in input
	for _, name := range slices.Sorted(maps.Keys(body)) {
		raw := body[name]
		if !slices.Contains(allowed, name) {
			return input{}, httpapi.Errorf(http.StatusBadRequest, "Unknown field %q (allowed: %s)", name, joinQuoted(allowed))
		}
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return input{}, httpapi.Errorf(http.StatusBadRequest, "%s must not be null", name)
		}
		switch name {
		case "url":
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return input{}, httpapi.Errorf(http.StatusBadRequest, "url must be a string")
			}
			u, err := h.opts.Webhooks.CheckURL(s)
			if err != nil {
				return input{}, httpapi.Errorf(http.StatusBadRequest, "%s", err.Error())
			}
			in.url = &u
		case "description":
			var s string
			if json.Unmarshal(raw, &s) != nil || utf8.RuneCountInString(s) > MaxDescription {
				return input{}, httpapi.Errorf(http.StatusBadRequest, "description must be a string of at most %d characters", MaxDescription)
			}
			in.description = &s
		case "types":
			t, err := parseTypes(raw)
			if err != nil {
				return input{}, err
			}
			in.types = &t
		case "active":
			var b bool
			if json.Unmarshal(raw, &b) != nil {
				return input{}, httpapi.Errorf(http.StatusBadRequest, "active must be a boolean")
			}
			in.active = &b
		}
	}
	return in, nil
}

func parseTypes(raw json.RawMessage) ([]string, error) {
	var in []string
	if json.Unmarshal(raw, &in) != nil || len(in) == 0 || len(in) > MaxTypes {
		return nil, httpapi.Errorf(http.StatusBadRequest, "types must be an array of 1 to %d notification type codes", MaxTypes)
	}
	var out []string
	for _, c := range in {
		if _, ok := notify.Lookup(c); !ok {
			return nil, httpapi.Errorf(http.StatusBadRequest, "Unknown notification type %q (known: %s)", truncate(c, 64), joinQuoted(notify.Codes()))
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func joinQuoted(names []string) string {
	b, _ := json.Marshal(names)
	return string(b)
}

func (h handlers) create(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	in, err := h.parse(r, "url", "types", "description")
	if err != nil {
		return err
	}
	if in.url == nil || in.types == nil {
		return httpapi.Errorf(http.StatusBadRequest, "url and types are required")
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return err
	}
	id := store.NewWebhookID()
	sealed, err := h.opts.Sealer.Seal(r.Context(), secret, store.WebhookSecretRecord(p.CompanyID, id))
	if err != nil {
		return err
	}
	ep := store.WebhookEndpoint{ID: id, CompanyID: p.CompanyID, URL: *in.url, Types: *in.types, Active: true, SealedSecret: sealed}
	if in.description != nil {
		ep.Description = *in.description
	}
	ep, err = h.store.CreateWebhook(r.Context(), ep)
	if errors.Is(err, store.ErrLimit) {
		return httpapi.Errorf(http.StatusConflict, "A company may have at most %d webhook endpoints", store.MaxWebhooksPerCompany)
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"status": "ok", "webhook": viewOf(ep, h.now()), "secret": secret})
}

// paging reads page_size (1 to MaxPageSize) and the page token
// (next_page_token, or page_token).
func paging(r *http.Request) (store.PageQuery, error) {
	p, err := httpapi.ParsePaging(r, DefaultPageSize, MaxPageSize)
	if err != nil {
		return store.PageQuery{}, err
	}
	if p.Page != 1 {
		return store.PageQuery{}, httpapi.Errorf(http.StatusBadRequest, "page is not supported here: follow next_page_token")
	}
	return p.Query(), nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	q, err := paging(r)
	if err != nil {
		return err
	}
	eps, res, err := h.store.ListWebhooks(r.Context(), p.CompanyID, q)
	if err != nil {
		return err
	}
	total, err := h.store.WebhookCount(r.Context(), p.CompanyID)
	if err != nil {
		return err
	}
	views, now := make([]view, 0, len(eps)), h.now()
	for _, e := range eps {
		views = append(views, viewOf(e, now))
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"status": "ok", "webhooks": views, "total_webhooks": total, "page_size": q.Limit, "next_page_token": nullable(res.Next),
	})
}

// load reads the path's endpoint in the caller's company.
func (h handlers) load(r *http.Request) (store.WebhookEndpoint, error) {
	id, ok := store.CanonicalUUID(r.PathValue("webhook_id"))
	if !ok {
		return store.WebhookEndpoint{}, errNotFound
	}
	ep, err := h.store.GetWebhook(r.Context(), auth.FromContext(r.Context()).CompanyID, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.WebhookEndpoint{}, errNotFound
	}
	return ep, err
}

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	ep, err := h.load(r)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "webhook": viewOf(ep, h.now())})
}

func (h handlers) update(w http.ResponseWriter, r *http.Request) error {
	ep, err := h.load(r)
	if err != nil {
		return err
	}
	in, err := h.parse(r, "url", "types", "description", "active")
	if err != nil {
		return err
	}
	ch := store.WebhookChange{URL: in.url, Types: in.types, Description: in.description, Active: in.active}
	if in.active != nil && *in.active {
		// Turning an endpoint on again starts its failure clock afresh.
		empty := ""
		ch.DisabledReason, ch.FailingSince = &empty, &empty
	}
	ep, err = h.store.ChangeWebhook(r.Context(), ep, ch, "webhook.update")
	if errors.Is(err, store.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "webhook": viewOf(ep, h.now())})
}

func (h handlers) delete(w http.ResponseWriter, r *http.Request) error {
	ep, err := h.load(r)
	if err != nil {
		return err
	}
	if err := h.store.DeleteWebhook(r.Context(), ep); errors.Is(err, store.ErrNotFound) {
		return errNotFound
	} else if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// rotate replaces the signing secret; the previous one keeps signing (a
// second signature in webhook-signature) for RotationOverlap.
func (h handlers) rotate(w http.ResponseWriter, r *http.Request) error {
	ep, err := h.load(r)
	if err != nil {
		return err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return err
	}
	sealed, err := h.opts.Sealer.Seal(r.Context(), secret, store.WebhookSecretRecord(ep.CompanyID, ep.ID))
	if err != nil {
		return err
	}
	until := store.SortableTime(h.now().Add(RotationOverlap))
	ep, err = h.store.ChangeWebhook(r.Context(), ep, store.WebhookChange{
		SealedSecret: &sealed, PrevSealedSecret: &ep.SealedSecret, PrevSecretUntil: &until,
	}, "webhook.rotate_secret")
	if errors.Is(err, store.ErrNotFound) {
		return errNotFound
	}
	if errors.Is(err, store.ErrConflict) {
		return httpapi.Errorf(http.StatusConflict, "The secret was rotated meanwhile; read the webhook and rotate again if needed")
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "webhook": viewOf(ep, h.now()), "secret": secret})
}

// test sends a signed webhook_test event to the endpoint now and answers
// what came of it as a class (webhook.Outcome*), never the error's text.
// It is not recorded in the delivery log; the audit log records it.
func (h handlers) test(w http.ResponseWriter, r *http.Request) error {
	ep, err := h.load(r)
	if err != nil {
		return err
	}
	now := h.now()
	secrets, err := h.dispatch.SigningSecrets(r.Context(), ep, now)
	if err != nil {
		return err
	}
	id := "test_" + store.NewWebhookID()
	payload, err := json.Marshal(notify.Payload{
		Type: "webhook_test", ID: id, CreatedAt: now.UTC().Format(time.RFC3339), CompanyID: ep.CompanyID,
		Data: json.RawMessage(fmt.Sprintf(`{"webhook_id":%q}`, ep.ID)),
	})
	if err != nil {
		return err
	}
	res := h.opts.Webhooks.Send(r.Context(), ep.URL, webhook.Message{ID: id, Payload: payload, Secrets: secrets})
	outcome := res.Outcome()
	out := map[string]any{
		"status": "ok", "event_id": id, "delivered": res.Delivered(), "latency_ms": res.Latency.Milliseconds(),
		"outcome": outcome, "status_code": nil,
	}
	changes := map[string]store.Change{"event_id": {After: id}, "outcome": {After: outcome}}
	if res.StatusCode != 0 {
		out["status_code"] = res.StatusCode
		changes["status_code"] = store.Change{After: res.StatusCode}
	}
	err = h.store.Audit(r.Context(), ep.CompanyID, store.AuditEntry{Action: "webhook.test", TargetType: "webhook", TargetID: ep.ID, Changes: changes})
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
	if outcome != "" && outcome != store.AttemptSucceeded && outcome != store.AttemptFailed {
		return httpapi.Errorf(http.StatusBadRequest, "status must be succeeded or failed")
	}
	log, res, err := h.store.ListAttempts(r.Context(), ep.CompanyID, ep.ID, outcome, q)
	if err != nil {
		return err
	}
	out := make([]attemptView, 0, len(log))
	for _, a := range log {
		v := attemptView{DeliveryID: a.DeliveryID, EventID: a.EventID, EventType: a.EventType, Attempt: a.Attempt,
			AttemptedAt: apiTime(a.At), Outcome: a.Outcome, LatencyMS: a.LatencyMS, Error: nullable(a.Error)}
		if a.StatusCode != 0 {
			v.StatusCode = &a.StatusCode
		}
		if a.NextRetryAt != "" {
			t := apiTime(a.NextRetryAt)
			v.NextRetryAt = &t
		}
		out = append(out, v)
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"status": "ok", "deliveries": out, "page_size": q.Limit, "next_page_token": nullable(res.Next),
	})
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
	del, err := h.store.GetDelivery(r.Context(), ep.CompanyID, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && (del.Channel != store.ChannelWebhook || del.Recipient != ep.ID) {
		return errDeliveryNotFound
	}
	if err != nil {
		return err
	}
	del, err = h.dispatch.Redeliver(r.Context(), ep.CompanyID, id)
	if errors.Is(err, store.ErrConflict) {
		return httpapi.Errorf(http.StatusConflict, "The delivery is being sent right now; try again in a few minutes")
	}
	if err != nil {
		return err
	}
	err = h.store.Audit(r.Context(), ep.CompanyID, store.AuditEntry{
		Action: "webhook.redeliver", TargetType: "webhook", TargetID: ep.ID,
		Changes: map[string]store.Change{"delivery_id": {After: del.ID}, "state": {After: del.State}},
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
