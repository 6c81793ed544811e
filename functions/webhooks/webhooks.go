// Package webhooks lets company admins register webhook endpoints for
// notification types, rotate their signing secrets, send test events, and
// read and replay each endpoint's delivery log. Deliveries themselves are
// made by the delivery engine (shared/deliveryengine).
package webhooks

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store/schema"
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
const EnvAllowLoopback = deliveryengine.EnvAllowLoopback

// Options are the group's dependencies beyond config.Deps.
type Options struct {
	Sealer   secrets.Sealer  // seals signing secrets and chat URLs
	Webhooks *webhook.Client // sends test events and redeliveries
	AppURL   string          // the web application, for links in chat messages
}

// OptionsFromEnv builds Options from the environment.
func OptionsFromEnv(ctx context.Context) (Options, error) {
	sealer, err := secrets.FromEnv(ctx)
	if err != nil {
		return Options{}, err
	}
	loopback, _ := strconv.ParseBool(os.Getenv(EnvAllowLoopback))
	return Options{Sealer: sealer, Webhooks: webhook.New(webhook.Options{AllowLoopback: loopback}), AppURL: os.Getenv(deliveryengine.EnvAppURL)}, nil
}

// New returns the group's handler configured from the environment.
func New(d config.Deps) http.Handler {
	return NewWithOptions(d, config.Must(OptionsFromEnv(context.Background())))
}

// NewWithOptions returns the group's handler with explicit options.
func NewWithOptions(d config.Deps, o Options) http.Handler {
	h := handlers{store: StoreOf(d.Store), opts: o, now: d.Clock(), dispatch: &deliveryengine.Engine{
		Store: deliveryengine.StoreOf(d.Store), Webhooks: o.Webhooks, Sealer: o.Sealer, Backoff: deliveryengine.DefaultBackoff, Log: d.Server.Log,
		Metrics: d.Metrics, Now: d.Now, AppURL: o.AppURL,
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
		"POST /webhooks/filter-dry-run":                                  h.dryRun,
	})
}

type handlers struct {
	store    Store
	opts     Options
	dispatch *deliveryengine.Engine
	now      func() time.Time
}

var (
	errNotFound         = httpapi.NotFound("Webhook not found")
	errDeliveryNotFound = httpapi.NotFound("Delivery not found")
)

// view is an endpoint as the API shows it: never its secret.
type view struct {
	ID                   string   `json:"id"`
	Kind                 string   `json:"kind"`
	URL                  string   `json:"url"`
	Filter               *string  `json:"filter"`
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
func viewOf(w schema.WebhookEndpoint, now time.Time) view {
	v := view{ID: w.ID, Kind: w.KindOrDefault(), URL: w.URL, Filter: nullable(w.Filter), Types: w.Types, Description: w.Description,
		Active: w.Active, CreatedAt: apiTime(w.CreatedAt), UpdatedAt: apiTime(w.UpdatedAt)}
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

// paging reads page_size (1 to MaxPageSize) and the page token
// (next_page_token, or page_token).
func paging(r *http.Request) (httpapi.Paging, error) {
	p, err := httpapi.ParsePaging(r, DefaultPageSize, MaxPageSize)
	if err != nil {
		return httpapi.Paging{}, err
	}
	if p.Page != 1 {
		return httpapi.Paging{}, httpapi.Invalid("page is not supported here: follow next_page_token")
	}
	return p, nil
}

// webhookList is how the endpoints' list answers a page: followed by
// token only, with the company's number of endpoints.
var webhookList = httpapi.List{Rows: "webhooks", Total: "total_webhooks", PageSize: true, NullNext: true}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
