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
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/acme/codescan-api/shared/routes"
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
	addConventions(base)
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

// addConventions documents the edge's HTTP conventions on the routes the
// route table says take part (shared/httpapi): the rate-limit headers on
// every answer of an authenticated operation, ETag and 304 on the
// validated reads, Idempotency-Key and its 409 and 422 on the creations.
func addConventions(doc map[string]any) {
	paths := asMap(doc["paths"])
	comps := asMap(asMap(doc["components"])["responses"])
	limited := map[string]bool{} // component responses authenticated answers use
	for _, rt := range routes.Table {
		op := asMap(asMap(paths[rt.Path])[strings.ToLower(rt.Method)])
		responses := asMap(op["responses"])
		if responses == nil {
			continue // the route-table test names what is missing
		}
		if rt.Validated() {
			addParam(op, "IfNoneMatch")
			responses["200"] = inline(comps, responses["200"])
			addHeaders(asMap(responses["200"]), "ETag", "Cache-Control")
			responses["304"] = ref("responses", "NotModified")
		}
		if rt.Creates || rt.Idempotent {
			addParam(op, "IdempotencyKey")
			answers := []string{"201"}
			if !rt.Creates {
				answers = []string{"200", "202"}
			}
			for _, code := range answers {
				addHeaders(asMap(responses[code]), "Idempotent-Replayed")
			}
			responses["422"] = ref("responses", "IdempotencyMismatch")
			responses["409"] = mergeConflict(responses["409"])
		}
		if rt.Access == routes.Public {
			continue
		}
		for code, r := range responses {
			if name, ok := strings.CutPrefix(refOf(r), "#/components/responses/"); ok {
				if code != "401" { // answered before the request is counted
					limited[name] = true
				}
				continue
			}
			addHeaders(asMap(r), "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset")
		}
	}
	for name := range limited {
		addHeaders(asMap(comps[name]), "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset")
	}
}

// mergeConflict is a creation's 409: the Idempotency-Key conflict, joined
// to the route's own 409 when it has one.
func mergeConflict(own any) any {
	r := asMap(own)
	if r == nil {
		return ref("responses", "IdempotencyConflict")
	}
	r["description"] = fmt.Sprint(r["description"]) + " With Idempotency-Key: a request with the key is in progress, " +
		"or it already created the record and its answer carried a secret shown only once."
	media := asMap(asMap(r["content"])["application/json"])
	if s := media["schema"]; s != nil && refOf(s) != "#/components/schemas/Error" {
		media["schema"] = map[string]any{"anyOf": []any{s, ref("schemas", "Error")}}
	}
	return r
}

// inline is a response given by reference as a copy of its own, so headers
// can be added for one operation (the component serves others too).
func inline(comps map[string]any, r any) any {
	name, ok := strings.CutPrefix(refOf(r), "#/components/responses/")
	if !ok {
		return r
	}
	out := map[string]any{}
	for k, v := range asMap(comps[name]) {
		out[k] = v
	}
	headers := map[string]any{}
	for k, v := range asMap(out["headers"]) {
		headers[k] = v
	}
	out["headers"] = headers
	return out
}

func ref(kind, name string) map[string]any {
	return map[string]any{"$ref": "#/components/" + kind + "/" + name}
}

func refOf(v any) string {
	s, _ := asMap(v)["$ref"].(string)
	return s
}

// addParam adds a shared parameter to an operation.
func addParam(op map[string]any, name string) {
	params, _ := op["parameters"].([]any)
	op["parameters"] = append(params, ref("parameters", name))
}

// addHeaders adds shared headers to an inline response.
func addHeaders(r map[string]any, names ...string) {
	if r == nil || r["$ref"] != nil {
		return
	}
	h := section(r, "headers")
	for _, n := range names {
		if h[n] == nil {
			h[n] = ref("headers", n)
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
