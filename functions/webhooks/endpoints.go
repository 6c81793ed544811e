package webhooks

import (
	"errors"
	"net/http"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/webhook"
)

func (h handlers) create(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	in, err := h.parse(r, "", "url", "types", "description", "kind", "filter")
	if err != nil {
		return err
	}
	if in.url == nil || in.types == nil {
		return httpapi.Invalid("url and types are required")
	}
	kind := webhook.KindWebhook
	if in.kind != nil {
		kind = *in.kind
	}
	id := delivery.NewWebhookID()
	// A signed webhook gets a signing secret (answered once); a chat
	// destination has none: its URL is the secret, sealed as one and shown
	// masked from now on.
	shown, secret, sealed := *in.url, "", ""
	if kind == webhook.KindWebhook {
		if secret, err = webhook.NewSecret(); err != nil {
			return err
		}
		sealed, err = h.opts.Sealer.Seal(r.Context(), secret, delivery.WebhookSecretRecord(p.CompanyID, id))
	} else {
		shown = webhook.Mask(*in.url)
		sealed, err = h.opts.Sealer.Seal(r.Context(), *in.url, delivery.WebhookSecretRecord(p.CompanyID, id))
	}
	if err != nil {
		return err
	}
	ep := schema.WebhookEndpoint{ID: id, CompanyID: p.CompanyID, URL: shown, Types: *in.types, Active: true, SealedSecret: sealed, Kind: kind}
	if in.description != nil {
		ep.Description = *in.description
	}
	if in.filter != nil {
		ep.Filter = *in.filter
	}
	ep, err = h.store.Deliveries.CreateWebhook(r.Context(), ep)
	if errors.Is(err, delivery.ErrLimit) {
		return httpapi.Conflict("A company may have at most %d webhook endpoints", delivery.MaxWebhooksPerCompany)
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"status": "ok", "webhook": viewOf(ep, h.now()), "secret": nullable(secret)})
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	q, err := paging(r)
	if err != nil {
		return err
	}
	eps, err := h.store.Deliveries.ListWebhooks(r.Context(), p.CompanyID, q.Query())
	if err != nil {
		return err
	}
	now := h.now()
	return httpapi.WriteList(w, q, webhookList, page.Map(eps, func(e schema.WebhookEndpoint) view { return viewOf(e, now) }))
}

// load reads the path's endpoint in the caller's company.
func (h handlers) load(r *http.Request) (schema.WebhookEndpoint, error) {
	id, ok := schema.CanonicalUUID(r.PathValue("webhook_id"))
	if !ok {
		return schema.WebhookEndpoint{}, errNotFound
	}
	ep, err := h.store.Deliveries.GetWebhook(r.Context(), auth.FromContext(r.Context()).CompanyID, id)
	if errors.Is(err, ddb.ErrNotFound) {
		return schema.WebhookEndpoint{}, errNotFound
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
	in, err := h.parse(r, ep.KindOrDefault(), "url", "types", "description", "active", "filter")
	if err != nil {
		return err
	}
	ch := delivery.WebhookChange{URL: in.url, Types: in.types, Description: in.description, Active: in.active, Filter: in.filter}
	if in.url != nil && ep.Chat() {
		// A chat destination's new URL is its new secret.
		sealed, err := h.opts.Sealer.Seal(r.Context(), *in.url, delivery.WebhookSecretRecord(ep.CompanyID, ep.ID))
		if err != nil {
			return err
		}
		masked := webhook.Mask(*in.url)
		ch.URL, ch.SealedSecret = &masked, &sealed
	}
	if in.active != nil && *in.active {
		// Turning an endpoint on again starts its failure clock afresh.
		empty := ""
		ch.DisabledReason, ch.FailingSince = &empty, &empty
	}
	ep, err = h.store.Deliveries.ChangeWebhook(r.Context(), ep, ch, "webhook.update")
	if errors.Is(err, ddb.ErrNotFound) {
		return errNotFound
	}
	if errors.Is(err, ddb.ErrConflict) {
		return httpapi.Conflict("The webhook changed meanwhile; read it and try again")
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
	if err := h.store.Deliveries.DeleteWebhook(r.Context(), ep); errors.Is(err, ddb.ErrNotFound) {
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
	if ep.Chat() {
		return httpapi.Invalid("A %s destination has no signing secret: its URL is the secret; PATCH a new url to replace it", ep.Kind)
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return err
	}
	sealed, err := h.opts.Sealer.Seal(r.Context(), secret, delivery.WebhookSecretRecord(ep.CompanyID, ep.ID))
	if err != nil {
		return err
	}
	until := ddb.SortableTime(h.now().Add(RotationOverlap))
	ep, err = h.store.Deliveries.ChangeWebhook(r.Context(), ep, delivery.WebhookChange{
		SealedSecret: &sealed, PrevSealedSecret: &ep.SealedSecret, PrevSecretUntil: &until,
	}, "webhook.rotate_secret")
	if errors.Is(err, ddb.ErrNotFound) {
		return errNotFound
	}
	if errors.Is(err, ddb.ErrConflict) {
		return httpapi.Conflict("The secret was rotated meanwhile; read the webhook and rotate again if needed")
	}
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "webhook": viewOf(ep, h.now()), "secret": secret})
}
