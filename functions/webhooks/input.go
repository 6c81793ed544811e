package webhooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/eventfilter"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/webhook"
)

// input is a validated create or update body; nil members are absent.
type input struct {
	url, description *string
	types            *[]string
	active           *bool
	kind             *string
	filter           *string // "" removes the filter
	rawURL           *string // url as sent, checked once the kind is known
}

// parse reads a body of the allowed members, each of its type; the url is
// checked by the rules of the body's kind, else of kind (the endpoint's,
// or "" for a new one: a signed webhook).
func (h handlers) parse(r *http.Request, kind string, allowed ...string) (input, error) {
	body, err := httpapi.DecodeJSONObject(r)
	if err != nil {
		return input{}, err
	}
	var in input
	for _, name := range slices.Sorted(maps.Keys(body)) {
		raw := body[name]
		if !slices.Contains(allowed, name) {
			return input{}, httpapi.Invalid("Unknown field %q (allowed: %s)", name, joinQuoted(allowed))
		}
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return input{}, httpapi.Invalid("%s must not be null", name)
		}
		if err := in.member(name, raw); err != nil {
			return input{}, err
		}
	}
	if in.rawURL != nil {
		if in.kind != nil {
			kind = *in.kind
		}
		if kind == "" {
			kind = webhook.KindWebhook
		}
		u, err := h.opts.Webhooks.CheckKindURL(kind, *in.rawURL)
		if err != nil {
			return input{}, httpapi.Invalid("%s", err.Error())
		}
		in.url = &u
	}
	return in, nil
}

// member reads one member of the body (not null) into in.
func (in *input) member(name string, raw json.RawMessage) error {
	switch name {
	case "url":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return httpapi.Invalid("url must be a string")
		}
		in.rawURL = &s
	case "kind":
		var s string
		if json.Unmarshal(raw, &s) != nil || !slices.Contains(webhook.Kinds, s) {
			return httpapi.Invalid("kind must be one of %s", joinQuoted(webhook.Kinds))
		}
		in.kind = &s
	case "filter":
		f, err := parseFilter(raw)
		if err != nil {
			return err
		}
		in.filter = &f
	case "description":
		var s string
		if json.Unmarshal(raw, &s) != nil || utf8.RuneCountInString(s) > MaxDescription {
			return httpapi.Invalid("description must be a string of at most %d characters", MaxDescription)
		}
		in.description = &s
	case "types":
		t, err := parseTypes(raw)
		if err != nil {
			return err
		}
		in.types = &t
	case "active":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return httpapi.Invalid("active must be a boolean")
		}
		in.active = &b
	}
	return nil
}

// parseFilter reads a filter expression: a string compiled, type-checked
// and costed (shared/eventfilter); "" is no filter.
func parseFilter(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", httpapi.Invalid("filter must be a string (a CEL expression over event)")
	}
	src, err := eventfilter.Check(s)
	var fe *eventfilter.Error
	if errors.As(err, &fe) {
		return "", httpapi.Invalid("filter: %s", fe.Error())
	}
	return src, err
}

func parseTypes(raw json.RawMessage) ([]string, error) {
	var in []string
	if json.Unmarshal(raw, &in) != nil || len(in) == 0 || len(in) > MaxTypes {
		return nil, httpapi.Invalid("types must be an array of 1 to %d notification type codes", MaxTypes)
	}
	var out []string
	for _, c := range in {
		if _, ok := notify.Lookup(c); !ok {
			return nil, httpapi.Invalid("Unknown notification type %q (known: %s)", truncate(c, 64), joinQuoted(notify.Codes()))
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
