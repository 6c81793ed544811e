// Package assemble builds the service's OpenAPI 3.1 document from a base
// and one fragment per endpoint group (groups/<group>.yaml), so each group
// documents its own routes. Fragments contribute paths and components; a
// name defined twice is an error. It runs at build time (go generate in
// shared/openapi), so no Lambda links a YAML parser.
package assemble

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"

	"go.yaml.in/yaml/v3"
)

// Document assembles the document from base.yaml and groups/*.yaml of
// files, as compact JSON.
func Document(files fs.FS) ([]byte, error) {
	base, err := load(files, "base.yaml")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(files, "groups/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	for _, name := range names {
		frag, err := load(files, name)
		if err != nil {
			return nil, err
		}
		if err := mergeInto(base, frag, name); err != nil {
			return nil, err
		}
	}
	addSharedResponses(base)
	return json.Marshal(base)
}

// addSharedResponses documents what the shared layers may answer to every
// authenticated operation, so fragments need not repeat it: the edge's
// 400, 413 and 415, the rate limit's 429, and 503 when DynamoDB keeps refusing past the store's retry
// budget (authentication reads it too) or a bearer token cannot be checked
// because the JWKS cannot be fetched.
func addSharedResponses(doc map[string]any) {
	for _, item := range asMap(doc["paths"]) {
		for _, op := range asMap(item) {
			op := asMap(op)
			responses := asMap(op["responses"])
			if sec, ok := op["security"].([]any); ok && len(sec) == 0 && responses["401"] == nil {
				continue // public (a route with its credential in the path documents 401)
			}
			if responses == nil {
				continue
			}
			// What the edge answers before any handler runs (shared/httpapi):
			// more than one credential or a malformed declared parameter is
			// 400, an unknown Content-Encoding 415, a body over the route's
			// limit 413.
			ref := func(code, name string) {
				if responses[code] == nil {
					responses[code] = map[string]any{"$ref": "#/components/responses/" + name}
				}
			}
			ref("400", "BadRequest")
			ref("415", "UnsupportedMedia")
			if op["requestBody"] != nil {
				ref("413", "TooLarge")
			}
			responses["429"] = map[string]any{"$ref": "#/components/responses/TooManyRequests"}
			responses["503"] = map[string]any{"$ref": "#/components/responses/Unavailable"}
		}
	}
}

func load(files fs.FS, name string) (map[string]any, error) {
	raw, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// mergeInto adds a fragment's paths and components (by section) to base.
func mergeInto(base, frag map[string]any, name string) error {
	if err := addAll(section(base, "paths"), asMap(frag["paths"]), name+" paths"); err != nil {
		return err
	}
	comps := section(base, "components")
	for kind, entries := range asMap(frag["components"]) {
		if err := addAll(section(comps, kind), asMap(entries), name+" components."+kind); err != nil {
			return err
		}
	}
	return nil
}

func addAll(dst, src map[string]any, where string) error {
	for k, v := range src {
		if _, dup := dst[k]; dup {
			return fmt.Errorf("openapi: %s: %q defined twice", where, k)
		}
		dst[k] = v
	}
	return nil
}

func section(m map[string]any, key string) map[string]any {
	s, ok := m[key].(map[string]any)
	if !ok {
		s = map[string]any{}
		m[key] = s
	}
	return s
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
