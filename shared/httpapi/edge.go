package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/routes"
)

// MaxQueryBytes bounds the whole query string.
const MaxQueryBytes = 8 << 10

// checkCredentials refuses a request with more than one credential header
// (two SERVICE-TOKEN, two Authorization, or one of each; empty ones count),
// before any look-up: which one would win is no choice to make silently.
// API Gateway's multi-value headers arrive as repeated values too.
func checkCredentials(r *http.Request) error {
	if len(r.Header.Values(auth.APIKeyHeader))+len(r.Header.Values("Authorization")) > 1 {
		return ErrAmbiguousCredentials
	}
	return nil
}

// checkParams checks the route's path parameters and the query against the
// declarations of the route table, and canonicalizes uuids and ids in
// place, before the handler (or a key builder, a store call, a log line)
// sees them. Unknown query parameters are ignored, but bounded.
func checkParams(rt routes.Route, r *http.Request) error {
	for _, name := range rt.PathParams() {
		p, _ := rt.Declared(name)
		v, err := checkValue(p, r.PathValue(name))
		if err != nil {
			return err
		}
		r.SetPathValue(name, v)
	}
	if len(r.URL.RawQuery) > MaxQueryBytes {
		return OfKind(KindInvalid, "The query string exceeds %d bytes", MaxQueryBytes)
	}
	q := r.URL.Query()
	changed := false
	for name, values := range q {
		p, declared := rt.Declared(name)
		if isPathParam(rt, name) {
			declared = false // a query parameter named like a path wildcard is not that wildcard
		}
		for i, v := range values {
			if len(v) > routes.MaxQueryValueBytes {
				return OfKind(KindInvalid, "%s exceeds %d bytes", Truncate(name, 64), routes.MaxQueryValueBytes)
			}
			if !declared || v == "" {
				continue
			}
			canon, err := checkValue(p, v)
			if err != nil {
				return err
			}
			if canon != v {
				values[i], changed = canon, true
			}
		}
	}
	if changed {
		r.URL.RawQuery = q.Encode()
	}
	return nil
}

func isPathParam(rt routes.Route, name string) bool {
	for _, n := range rt.PathParams() {
		if n == name {
			return true
		}
	}
	return false
}

// checkValue checks one value against its declaration and returns its
// canonical form.
func checkValue(p routes.Param, v string) (string, error) {
	switch p.Kind {
	case routes.ID:
		if _, err := ParseID(p.Name, v); err != nil {
			return "", err
		}
	case routes.UUID:
		id, ok := ParseUUID(strings.TrimSpace(v))
		if !ok {
			return "", OfKind(KindInvalid, "%s must be a UUID", p.Name)
		}
		return id, nil
	case routes.Enum:
		for _, allowed := range p.Values {
			if v == allowed {
				return v, nil
			}
		}
		return "", OfKind(KindInvalid, "%s must be one of %s", p.Name, strings.Join(p.Values, ", "))
	case routes.Int:
		if _, err := parseInt(p.Name, v, p.Min, p.Max); err != nil {
			return "", err
		}
	case routes.Bool:
		if _, err := parseBool(p.Name, v); err != nil {
			return "", err
		}
	case routes.FilePath:
		return v, checkFilePath(p, v)
	default:
		if !utf8.ValidString(v) {
			return "", OfKind(KindInvalid, "%s must be UTF-8 text", p.Name)
		}
		v = norm.NFC.String(v)
		if err := checkText(p, v); err != nil {
			return "", err
		}
	}
	return v, nil
}

// checkText holds text to its bound and to cleantext's rules.
func checkText(p routes.Param, v string) error {
	if len(v) > p.Limit() {
		return OfKind(KindInvalid, "%s exceeds %d bytes", p.Name, p.Limit())
	}
	if !utf8.ValidString(v) {
		return OfKind(KindInvalid, "%s must be UTF-8 text", p.Name)
	}
	if p.Multiline {
		if _, err := cleantext.Lines(p.Name, v); err != nil {
			return OfKind(KindInvalid, "%s", err.Error())
		}
		return nil
	}
	return readableLine(p.Name, v)
}

// readableLine is cleantext's rule of single-line text, as a 400.
func readableLine(name, v string) error {
	if _, err := cleantext.Line(name, v); err != nil {
		return OfKind(KindInvalid, "%s", err.Error())
	}
	return nil
}

// checkFilePath checks a file path as the handler will read it: percent
// escapes decoded (report paths are, so `%00` or `%2500` is a NUL), and
// backslashes separating segments as slashes do. A name over
// MaxSegmentBytes exists on no common file system (and a local S3
// stand-in that keeps objects as files fails on it).
func checkFilePath(p routes.Param, v string) error {
	if err := checkText(p, v); err != nil {
		return err
	}
	decoded := v
	if d, err := url.PathUnescape(v); err == nil {
		decoded = d
	}
	if !utf8.ValidString(decoded) {
		return OfKind(KindInvalid, "%s must be UTF-8 text", p.Name)
	}
	if err := readableLine(p.Name, decoded); err != nil {
		return err
	}
	for _, seg := range strings.FieldsFunc(decoded, func(r rune) bool { return r == '/' || r == '\\' }) {
		if len(seg) > routes.MaxSegmentBytes {
			return OfKind(KindInvalid, "%s has a segment over %d bytes", p.Name, routes.MaxSegmentBytes)
		}
	}
	return nil
}

// ParseID reads a numeric id in its one form, [1-9][0-9]* within int64:
// no sign, no leading zero, no space. Path, query and body ids all go
// through it.
func ParseID(field, s string) (int64, error) {
	if s == "" || len(s) > 19 || s[0] < '1' || s[0] > '9' {
		return 0, errID(field)
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errID(field)
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errID(field)
	}
	return n, nil
}

// CheckIDs checks ids that arrived as JSON numbers (body ids): each must
// be a positive id.
func CheckIDs(field string, ids []int64) error {
	for _, id := range ids {
		if id < 1 {
			return errID(field)
		}
	}
	return nil
}

func errID(field string) *Error {
	return OfKind(KindInvalid, "%s must be a positive integer id (digits, no sign or leading zero)", field)
}

// ParseUUID reads a uuid, 8-4-4-4-12 hex digits in any case, and returns
// its canonical lower-case form.
func ParseUUID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return "", false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return "", false
		}
	}
	return strings.ToLower(s), true
}

// PathInt reads a numeric id path parameter (see ParseID).
func PathInt(r *http.Request, name string) (int64, error) {
	return ParseID(name, r.PathValue(name))
}

// parseInt reads a decimal integer from lo to hi (surrounding spaces
// allowed, as paging always accepted them).
func parseInt(name, raw string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, OfKind(KindInvalid, "%s must be an integer from %d to %d", name, lo, hi)
	}
	return n, nil
}

// checkBody reads the whole body (within the route's limit, gzip decoded)
// before the handler runs, so an oversized or broken body is refused
// whatever the handler would look up first, applies cleantext to the JSON
// body members the route declares as text people read and the edge's
// parameter rules to the members of its declared objects, and leaves the
// body for the handler to read again, its text NFC-normalized. A body that
// is not a JSON object is the handler's to refuse. Routes that stream
// their body (StreamsBody) read it themselves.
func checkBody(rt routes.Route, r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody || rt.StreamsBody {
		return nil
	}
	body, err := ReadBody(r, rt.BodyLimit())
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if len(rt.TextFields)+len(rt.MultilineFields)+len(rt.Objects) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return nil
	}
	if err := checkUTF8(body); err != nil {
		return err
	}
	changed := false
	apply := func(members map[string]json.RawMessage, name string, clean func(string) (string, error)) error {
		raw, ok := members[name]
		if !ok {
			return nil
		}
		out, err := eachString(raw, clean)
		if out != nil {
			members[name], changed = out, true
		}
		return err
	}
	for _, f := range rt.TextFields {
		if err := apply(obj, f, textRule(f, cleantext.Line)); err != nil {
			return err
		}
	}
	for _, f := range rt.MultilineFields {
		if err := apply(obj, f, textRule(f, cleantext.Lines)); err != nil {
			return err
		}
	}
	for _, o := range rt.Objects {
		var members map[string]json.RawMessage
		if raw, ok := obj[o.Member]; !ok || json.Unmarshal(raw, &members) != nil || members == nil {
			continue // absent or not an object: the handler's to answer
		}
		was := changed
		changed = false
		for _, p := range o.Params {
			rule := func(s string) (string, error) {
				if s == "" {
					return s, nil // absent, as an empty query value is
				}
				return checkValue(p, s)
			}
			if err := apply(members, p.Name, rule); err != nil {
				return err
			}
		}
		if changed {
			if obj[o.Member], err = json.Marshal(members); err != nil {
				return err
			}
		}
		changed = changed || was
	}
	if changed {
		if body, err = json.Marshal(obj); err != nil {
			return err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return nil
}

// textRule is a cleantext check of a body member: the white space handlers
// trim is trimmed for the check, the member keeps it (NFC-normalized).
func textRule(field string, clean func(string, string) (string, error)) func(string) (string, error) {
	return func(s string) (string, error) {
		if _, err := clean(field, trimASCII(s)); err != nil {
			return "", err
		}
		return norm.NFC.String(s), nil
	}
}

// eachString applies rule to a JSON string, or to each string of an array
// (other values are the handler's to refuse), and returns the member
// rewritten when rule changed a string (nil when none changed).
func eachString(raw json.RawMessage, rule func(string) (string, error)) (json.RawMessage, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		s, err := rule(one)
		if err != nil || s == one {
			return nil, err
		}
		return json.Marshal(s)
	}
	var many []*string
	if json.Unmarshal(raw, &many) != nil {
		return nil, nil
	}
	changed := false
	for _, s := range many {
		if s == nil {
			continue
		}
		c, err := rule(*s)
		if err != nil {
			return nil, err
		}
		changed = changed || c != *s
		*s = c
	}
	if !changed {
		return nil, nil
	}
	return json.Marshal(many)
}

// trimASCII trims the white space handlers trim. strings.TrimSpace would
// also drop U+0085 and U+00A0 at the ends, so a C1 control there would
// pass unseen.
func trimASCII(s string) string { return strings.Trim(s, " \t\r\n") }
