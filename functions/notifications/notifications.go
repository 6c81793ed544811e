// Package notifications serves company notification defaults and users'
// notification preferences.
package notifications

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/eventfilter"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/routes"
	storedelivery "github.com/acme/codescan-api/shared/store/delivery"
)

type handlers struct{ store Store }

// New returns the group's http.Handler.
func New(d config.Deps) http.Handler {
	h := handlers{store: StoreOf(d.Store)}
	return d.Server.Group(routes.GroupNotifications, map[string]httpapi.HandlerFunc{
		"GET /notifications/preferences":                   h.list,
		"POST /notifications/preferences/{type_code}":      h.setUser,
		"POST /notifications/company-defaults/{type_code}": h.setCompany,
		"GET /sla-settings":                                h.getSLA,
		"PUT /sla-settings":                                h.putSLA,
	})
}

var errUnknownType = httpapi.NotFound("Unknown notification type")

func (h handlers) setCompany(w http.ResponseWriter, r *http.Request) error {
	return h.set(w, r, 0)
}

// MaxFilter bounds a preference's filter expression, in bytes.
const MaxFilter = eventfilter.MaxLength

func (h handlers) setUser(w http.ResponseWriter, r *http.Request) error {
	return h.set(w, r, auth.FromContext(r.Context()).UserID)
}

// set applies a partial update to one layer: members absent from the body
// keep their value, null restores inheritance.
func (h handlers) set(w http.ResponseWriter, r *http.Request, userID int64) error {
	p := auth.FromContext(r.Context())
	t, ok := notify.Lookup(r.PathValue("type_code"))
	if !ok {
		return errUnknownType
	}
	changes, err := parseChanges(r, userID != 0)
	if err != nil {
		return err
	}
	if len(changes) > 0 {
		if err := h.store.Deliveries.UpdateNotificationSetting(r.Context(), p.CompanyID, userID, t.Code, changes); err != nil {
			return err
		}
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

var channels = []string{storedelivery.ChannelEmail, storedelivery.ChannelWebhook}

// parseChanges reads a partial update: the channels, and for a user's
// preference the email filter (a CEL expression, compiled, type-checked
// and costed here; "" or null removes it).
func parseChanges(r *http.Request, user bool) ([]storedelivery.ChannelChange, error) {
	body, err := httpapi.DecodeJSONObject(r)
	if err != nil {
		return nil, err
	}
	var changes []storedelivery.ChannelChange
	allowed := "email_enabled, webhook_enabled"
	if user {
		allowed += ", filter"
	}
	for _, name := range slices.Sorted(maps.Keys(body)) {
		if !slices.Contains(channels, name) && !(user && name == storedelivery.SettingFilter) {
			return nil, httpapi.Invalid("Unknown field %q (allowed: %s)", name, allowed)
		}
	}
	if raw, ok := body[storedelivery.SettingFilter]; ok {
		f, err := parseFilter(raw)
		if err != nil {
			return nil, err
		}
		changes = append(changes, storedelivery.ChannelChange{Channel: storedelivery.SettingFilter, Text: &f})
	}
	for _, name := range channels {
		raw, present := body[name]
		if !present {
			continue
		}
		c := storedelivery.ChannelChange{Channel: name}
		if !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			var v bool
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, httpapi.Invalid("%s must be a boolean or null", name)
			}
			c.Value = &v
		}
		changes = append(changes, c)
	}
	return changes, nil
}

type channelPair struct {
	EmailEnabled   *bool `json:"email_enabled"`
	WebhookEnabled *bool `json:"webhook_enabled"`
}

type preference struct {
	TypeCode        string            `json:"type_code"`
	Filter          *string           `json:"filter"`
	Description     string            `json:"description"`
	EmailEnabled    bool              `json:"email_enabled"`
	WebhookEnabled  bool              `json:"webhook_enabled"`
	Sources         map[string]string `json:"sources"`
	PlatformDefault channelPair       `json:"platform_default"`
	CompanyDefault  channelPair       `json:"company_default"`
	UserPreference  channelPair       `json:"user_preference"`
}

// list answers every type's effective settings for the caller and where each
// value comes from.
func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	company, user, err := h.store.Deliveries.NotificationSettings(r.Context(), p.CompanyID, p.UserID)
	if err != nil {
		return err
	}
	out := make([]preference, 0, len(notify.Types))
	for _, t := range notify.Types {
		c, u := company[t.Code], user[t.Code]
		pref := preference{
			TypeCode: t.Code, Description: t.Description, Filter: nullable(u.Filter),
			Sources:         map[string]string{},
			PlatformDefault: channelPair{&t.EmailEnabled, &t.WebhookEnabled},
			CompanyDefault:  channelPair{c.EmailEnabled, c.WebhookEnabled},
			UserPreference:  channelPair{u.EmailEnabled, u.WebhookEnabled},
		}
		pref.EmailEnabled, pref.Sources[storedelivery.ChannelEmail] = notify.Resolve(t.EmailEnabled, c.EmailEnabled, u.EmailEnabled)
		pref.WebhookEnabled, pref.Sources[storedelivery.ChannelWebhook] = notify.Resolve(t.WebhookEnabled, c.WebhookEnabled, u.WebhookEnabled)
		out = append(out, pref)
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "preferences": out})
}

// parseFilter reads a filter: a string compiled by eventfilter, "" or
// null for none.
func parseFilter(raw json.RawMessage) (string, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", httpapi.Invalid("filter must be a string (a CEL expression over event) or null")
	}
	src, err := eventfilter.Check(s)
	var fe *eventfilter.Error
	if errors.As(err, &fe) {
		return "", httpapi.Invalid("filter: %s", fe.Error())
	}
	return src, err
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
