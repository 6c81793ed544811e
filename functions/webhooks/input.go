package webhooks

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/notify"
)

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
