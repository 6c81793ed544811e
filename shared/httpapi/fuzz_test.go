package httpapi

// Fuzz targets of the edge: the route table's parameter checks, paging,
// ids, uuids, Content-Encoding, JSON bodies and their text fields, and the
// opaque JSON check of the CI data. Each compares the parser with a plain
// statement of its rule (the oracle below), both ways where the rule is
// exact: what it accepts keeps the rule, what keeps the rule is accepted.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/schema"
)

var (
	idForm   = regexp.MustCompile(`^[1-9][0-9]{0,18}$`)
	uuidForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// keeps tells whether v is a value of p in its canonical form.
func keeps(p routes.Param, v string) bool {
	switch p.Kind {
	case routes.ID:
		_, err := strconv.ParseInt(v, 10, 64)
		return idForm.MatchString(v) && err == nil
	case routes.UUID:
		return uuidForm.MatchString(v)
	case routes.Enum:
		return slices.Contains(p.Values, v)
	case routes.Int:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return err == nil && n >= p.Min && n <= p.Max
	case routes.Bool:
		_, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(v)))
		return err == nil
	case routes.FilePath:
		return filePathOK(p, v)
	}
	return len(v) <= p.Limit() && utf8.ValidString(v) && readable(v, p.Multiline) == nil && norm.NFC.IsNormalString(v)
}

// acceptable tells whether v may be sent for p (a uuid in any case, with
// surrounding space; text in any normalization form).
func acceptable(p routes.Param, v string) bool {
	switch p.Kind {
	case routes.UUID:
		return uuidForm.MatchString(strings.ToLower(strings.TrimSpace(v)))
	case routes.Text:
		return utf8.ValidString(v) && keeps(p, norm.NFC.String(v))
	}
	return keeps(p, v)
}

// filePathOK is the rule of a file path stated on its own: within the
// bound, and readable text both as sent and once percent-decoded, where no
// name between slashes or backslashes exceeds 255 bytes.
func filePathOK(p routes.Param, v string) bool {
	if len(v) > p.Limit() || !utf8.ValidString(v) || readable(v, false) != nil {
		return false
	}
	if d, err := url.PathUnescape(v); err == nil {
		v = d
	}
	if !utf8.ValidString(v) || readable(v, false) != nil {
		return false
	}
	for _, name := range regexp.MustCompile(`[/\\]`).Split(v, -1) {
		if len(name) > 255 {
			return false
		}
	}
	return true
}

// clientError fails t unless err is an answer of the error model with one
// of the statuses.
func clientError(t *testing.T, err error, statuses ...int) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !slices.Contains(statuses, e.Status) || (e.Message == "" && e.Body == nil) {
		t.Fatalf("error %#v is not one of %v", err, statuses)
	}
}

// FuzzCheckParams: a route of the table (by index), its path values
// ("/"-separated, in wildcard order) and a raw query. checkParams accepts
// exactly what the route's declarations allow, and what it accepts reaches
// the handler in canonical form.
func FuzzCheckParams(f *testing.F) {
	index := map[string]uint16{}
	for i, rt := range routes.Table {
		index[rt.Method+" "+rt.Path] = uint16(i)
	}
	const uuid = "0B3E8A52-6d1c-4f7e-9a1b-2c3d4e5f6a7b"
	for _, s := range []struct{ route, path, query string }{
		{"GET /teams/{team_id}", "42", ""},
		{"GET /teams/{team_id}", "042", ""},
		{"GET /teams", "", "page=2&page_size=100"},
		{"GET /teams", "", "page=%201%20&page_size=0"},
		{"GET /issue/{issue_id}", " " + uuid + " ", ""},
		{"GET /issue/{issue_id}", "{" + uuid + "}", ""},
		{"GET /issues", "", "project=web&branch=main&repo=github.com/acme/web&cwe=79&page=1&page_size=100"},
		{"GET /issues", "", "project=%FF&branch=" + strings.Repeat("b", 1021)},
		{"GET /scan/{scan_id}/issues/quality", uuid, "classification=x&page=1000000&scan_id=not-a-uuid"},
		{"POST /scan-upload", "", "engine=sarif&project=p&run_id=" + uuid + "&run_id=" + strings.ToUpper(uuid)},
		{"POST /webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", uuid + "/" + strings.Repeat("d", 64), "zz=" + strings.Repeat("z", 2049)},
		{"GET /verify/{token}", "csk_" + strings.Repeat("A", 43), "a=1;b=2&%zz"},
		{"POST /code-upload", "", "run_id=" + uuid + "&path=src/" + strings.Repeat("a", 255) + "/b.go"},
		{"POST /code-upload", "", "path=" + strings.Repeat("a", 256)},
		{"POST /code-upload", "", "path=a%2500b&path=src%5Cx%E2%80%AE.go"},
		{"POST /code-upload", "", "path=cafe%CC%81%2Fmain.go"},
		{"GET /issues", "", "project=cafe%CC%81&branch=a%0Ab&file_path_exact=x%C2%85"},
		{"GET /verify", "", "user_info=TRUE"},
		{"GET /issues/groups", "", "breakdown=yes"},
	} {
		i, ok := index[s.route]
		if !ok {
			f.Fatalf("no route %s", s.route)
		}
		f.Add(i, s.path, s.query)
	}
	f.Fuzz(func(t *testing.T, i uint16, pathValues, rawQuery string) {
		rt := routes.Table[int(i)%len(routes.Table)]
		r := httptest.NewRequest(rt.Method, "/", nil)
		r.URL.RawQuery = rawQuery
		values := strings.Split(pathValues, "/")
		want := len(rawQuery) <= MaxQueryBytes
		for n, name := range rt.PathParams() {
			v := ""
			if n < len(values) {
				v = values[n]
			}
			r.SetPathValue(name, v)
			p, _ := rt.Declared(name)
			want = want && acceptable(p, v)
		}
		for name, vs := range r.URL.Query() {
			p, declared := rt.Declared(name)
			declared = declared && !slices.Contains(rt.PathParams(), name)
			for _, v := range vs {
				want = want && len(v) <= routes.MaxQueryValueBytes && (!declared || v == "" || acceptable(p, v))
			}
		}
		err := checkParams(rt, r)
		if (err == nil) != want {
			t.Fatalf("%s %s path %q query %q: error %v, want accepted %v", rt.Method, rt.Path, pathValues, truncate(rawQuery), err, want)
		}
		if err != nil {
			clientError(t, err, http.StatusBadRequest)
			return
		}
		for _, name := range rt.PathParams() {
			if p, _ := rt.Declared(name); !keeps(p, r.PathValue(name)) {
				t.Fatalf("%s: path value %q reaches the handler", name, r.PathValue(name))
			}
		}
		for name, vs := range r.URL.Query() {
			p, declared := rt.Declared(name)
			if !declared || slices.Contains(rt.PathParams(), name) {
				continue
			}
			for _, v := range vs {
				if v != "" && !keeps(p, v) {
					t.Fatalf("%s: query value %q reaches the handler", name, v)
				}
			}
		}
	})
}

func truncate(s string) string { return Truncate(s, 200) }

// FuzzPagingParams: ParsePaging (with the page sizes the handlers use)
// and BoolParam on any query: a 400, or the page, size and token the
// rule allows, defaults when absent.
func FuzzPagingParams(f *testing.F) {
	for _, q := range []string{
		"", "page=2&page_size=50", "page=%202%20", "page=0", "page=1000001", "page_size=101", "page=1e3", "page=-1",
		"page=99999999999999999999", "next_page_token=eyJrIjp7fX0.c3Vt&page=3", "next_page_token=" + strings.Repeat("t", 8193),
		"breakdown=TRUE&user_info=0", "breakdown=yes", "page=1&page=x", "page_size=+7",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.RawQuery = rawQuery
		q := r.URL.Query()
		number := func(name string, def, hi int) (int, bool) {
			raw := strings.TrimSpace(q.Get(name))
			if raw == "" {
				return def, true
			}
			n, err := strconv.ParseInt(raw, 10, 64)
			return int(n), err == nil && n >= 1 && n <= int64(hi)
		}
		for _, sizes := range [][2]int{{20, 100}, {30, 100}, {50, 50}} {
			pg, err := ParsePaging(r, sizes[0], sizes[1])
			page, okPage := number("page", 1, maxPage)
			size, okSize := number("page_size", sizes[0], sizes[1])
			token := q.Get(TokenParam)
			want := okPage && okSize && len(token) <= maxTokenLength
			if (err == nil) != want {
				t.Fatalf("ParsePaging(%q, %v) = %+v, %v; want accepted %v", truncate(rawQuery), sizes, pg, err, want)
			}
			if err != nil {
				clientError(t, err, http.StatusBadRequest)
				continue
			}
			if pg.Page != page || pg.PageSize != size || pg.Token != token || pg.Offset() < 0 || pg.Offset() != (page-1)*size {
				t.Fatalf("ParsePaging(%q, %v) = %+v", truncate(rawQuery), sizes, pg)
			}
			pq := pg.Query()
			if pq.Limit != size || pq.Token != token || (token == "" && pq.Offset != pg.Offset()) || (token != "" && pq.Offset != 0) {
				t.Fatalf("Query() of %+v = %+v", pg, pq)
			}
		}
		for _, name := range []string{"breakdown", "user_info"} {
			b, err := BoolParam(r, name)
			raw := strings.ToLower(strings.TrimSpace(q.Get(name)))
			want, perr := strconv.ParseBool(raw)
			switch {
			case raw == "" && (err != nil || b):
				t.Fatalf("BoolParam(%q) absent = %v, %v", name, b, err)
			case raw != "" && perr != nil:
				clientError(t, err, http.StatusBadRequest)
			case raw != "" && (err != nil || b != want):
				t.Fatalf("BoolParam(%q) of %q = %v, %v", name, raw, b, err)
			}
		}
	})
}

// FuzzParseID: an id is accepted exactly in its one form, the decimal
// form of a positive int64.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"1", "42", "9223372036854775807", "9223372036854775808", "01", "+1", "0", "-1", "1.0", "1e3", " 1", "１"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseID("team_id", s)
		parsed, perr := strconv.ParseInt(s, 10, 64)
		want := perr == nil && parsed >= 1 && strconv.FormatInt(parsed, 10) == s
		if (err == nil) != want {
			t.Fatalf("ParseID(%q) = %d, %v; want accepted %v", s, n, err, want)
		}
		if err != nil {
			clientError(t, err, http.StatusBadRequest)
			if !strings.Contains(err.Error(), "team_id") {
				t.Fatalf("error %v does not name the field", err)
			}
			return
		}
		if n != parsed {
			t.Fatalf("ParseID(%q) = %d", s, n)
		}
	})
}

// FuzzUUID: the edge's ParseUUID and the store's CanonicalUUID agree on
// every string, and the canonical form is lower-case 8-4-4-4-12 hex that
// maps to itself.
func FuzzUUID(f *testing.F) {
	for _, s := range []string{
		"0b3e8a52-6d1c-4f7e-9a1b-2c3d4e5f6a7b", "0B3E8A52-6D1C-4F7E-9A1B-2C3D4E5F6A7B", "0b3e8a526d1c4f7e9a1b2c3d4e5f6a7b",
		"{0b3e8a52-6d1c-4f7e-9a1b-2c3d4e5f6a7b}", "urn:uuid:0b3e8a52-6d1c-4f7e-9a1b-2c3d4e5f6a7b", "0b3e8a52-6d1c-4f7e-9a1b-2c3d4e5f6a7g",
		"0b3e8a52_6d1c_4f7e_9a1b_2c3d4e5f6a7b", " 0b3e8a52-6d1c-4f7e-9a1b-2c3d4e5f6a7", "00000000-0000-0000-0000-000000000000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseUUID(s)
		canon, okStore := schema.CanonicalUUID(s)
		if ok != okStore || got != canon {
			t.Fatalf("ParseUUID(%q) = %q, %v; store.CanonicalUUID = %q, %v", s, got, ok, canon, okStore)
		}
		if !ok {
			return
		}
		if !uuidForm.MatchString(got) || got != strings.ToLower(s) {
			t.Fatalf("ParseUUID(%q) = %q", s, got)
		}
		if again, ok := ParseUUID(got); !ok || again != got {
			t.Fatalf("ParseUUID(%q) = %q, %v", got, again, ok)
		}
	})
}

// jsonShape scans JSON text outside strings: the deepest nesting and the
// number of object members (one ':' each). Meaningful for valid JSON only.
func jsonShape(b []byte) (depth, members int) {
	inString, escaped, d := false, false, 0
	for _, c := range b {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			depth = max(depth, d)
		case c == '}' || c == ']':
			d--
		case c == ':':
			members++
		}
	}
	return depth, members
}

// jsonValues decodes b as a stream of JSON values (what json.Decoder
// reads), reporting whether every one of them is valid.
func jsonValues(b []byte) (n int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if err == io.EOF {
			return n, true
		}
		if err != nil {
			return n, false
		}
		n++
	}
}

// FuzzCheckOpaqueJSON: a body passes exactly when it is one valid JSON
// value of valid UTF-8 within the depth and member limits (bodies with \u
// escapes are held to the forward direction only: a lone surrogate is
// refused besides).
func FuzzCheckOpaqueJSON(f *testing.F) {
	for _, s := range []string{
		`{"GITHUB_SHA":"abc","n":1,"a":[1,{"b":null}]}`, `{}{}`, ``, `[1 2]`, `{"a" 1}`, `{"a":1,}`, `{"a":"\ud800"}`,
		`{"a":"\ud83d\ude00"}`, "{\"a\":\"\xff\"}", strings.Repeat("[", 32) + strings.Repeat("]", 32),
		strings.Repeat("[", 33) + strings.Repeat("]", 33), `{"a":` + strings.Repeat(`{"b":`, 31) + `1` + strings.Repeat(`}`, 32),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := CheckOpaqueJSON(body)
		n, valid := jsonValues(body)
		depth, members := jsonShape(body)
		if err != nil {
			clientError(t, err, http.StatusBadRequest)
			if json.Valid(body) && utf8.Valid(body) && depth <= MaxOpaqueDepth && members <= MaxOpaqueKeys && !bytes.Contains(body, []byte(`\u`)) {
				t.Fatalf("valid JSON refused (%v): %q", err, truncate(string(body)))
			}
			return
		}
		if n != 1 || !valid || !utf8.Valid(body) || depth > MaxOpaqueDepth || members > MaxOpaqueKeys {
			t.Fatalf("accepted: %d values, valid %v, UTF-8 %v, depth %d, %d members: %q", n, valid, utf8.Valid(body), depth, members, truncate(string(body)))
		}
	})
}

// FuzzReadBody: a body (gzip-compressed by the target when compress is
// set) under any Content-Encoding values ("|"-separated) through the
// edge's decoding and ReadBody, with small limits: 415 exactly for an
// unknown coding; else the bytes sent (identity) or what they decompress
// to (gzip), or 413 past a limit, or 400 for a broken gzip stream.
func FuzzReadBody(f *testing.F) {
	const limit, decoded = 1 << 8, 1 << 10 // small, so inputs past them stay small
	for _, s := range []struct {
		coding   string
		body     string
		compress bool
	}{
		{"", `{"name":"x"}`, false}, {"identity", "x", false}, {"gzip", `{"name":"x"}`, true}, {"x-gzip", "", true},
		{" GZIP ", "x", true}, {"gzip|gzip", "x", true}, {"gzip, br", "x", true}, {"br", "x", false},
		{"gzip", "\x1f\x8b\x08\x00garbage", false}, {"gzip", strings.Repeat(" ", decoded+1), true},
		{"", strings.Repeat("x", limit+1), false},
	} {
		f.Add(s.coding, []byte(s.body), s.compress)
	}
	f.Fuzz(func(t *testing.T, coding string, body []byte, compress bool) {
		sent := body
		if compress {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(body)
			zw.Close()
			sent = buf.Bytes()
		}
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(sent))
		var codings []string
		if coding != "" {
			codings = strings.Split(coding, "|")
		}
		for _, c := range codings {
			r.Header.Add("Content-Encoding", c)
		}
		norm := strings.ToLower(strings.TrimSpace(strings.Join(codings, ",")))
		err := decodeBody(r, limit, decoded)
		var got []byte
		if err == nil {
			got, err = ReadBody(r, decoded)
		}
		switch norm {
		case "", "identity":
			want := len(sent) <= limit
			if (err == nil) != want || (err == nil && !bytes.Equal(got, sent)) {
				t.Fatalf("identity body of %d bytes: %d bytes, %v", len(sent), len(got), err)
			}
			if err != nil {
				clientError(t, err, http.StatusRequestEntityTooLarge)
			}
		case "gzip", "x-gzip":
			zr, zerr := gzip.NewReader(bytes.NewReader(sent))
			var plain []byte
			if zerr == nil {
				plain, zerr = io.ReadAll(zr)
			}
			want := len(sent) <= limit && zerr == nil && len(plain) <= decoded
			if (err == nil) != want || (err == nil && !bytes.Equal(got, plain)) {
				t.Fatalf("gzip body of %d bytes (%d plain, %v): %d bytes, %v", len(sent), len(plain), zerr, len(got), err)
			}
			if compress && err == nil && !bytes.Equal(got, body) {
				t.Fatal("gzip round trip changed the body")
			}
			if err != nil {
				clientError(t, err, http.StatusBadRequest, http.StatusRequestEntityTooLarge)
			}
		default:
			if err == nil {
				t.Fatalf("coding %q accepted", norm)
			}
			clientError(t, err, http.StatusUnsupportedMediaType)
		}
	})
}

// fuzzRequestBody is a body the JSON targets decode: a field of each kind
// the handlers use.
type fuzzRequestBody struct {
	Name    *string        `json:"name"`
	Members []int64        `json:"member_ids"`
	Tags    []string       `json:"project_tags"`
	Active  *bool          `json:"active"`
	Extra   map[string]any `json:"extra"`
}

var fuzzBodyFields = []string{"name", "member_ids", "project_tags", "active", "extra"}

func newBodyRequest(body []byte) *http.Request {
	return httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
}

// FuzzDecodeJSON: DecodeJSONObject accepts exactly one JSON object of
// valid UTF-8 (the forward direction only for bodies with \u escapes);
// DecodeJSON accepts only such an object whose members are known fields.
// Errors are 400 or 413.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"name":"Backend","member_ids":[1,2],"project_tags":["a"],"active":true,"extra":{"x":[null]}}`,
		`{"name":null}`, `{"NAME":"x"}`, `{"name":1}`, `{"member_ids":[1.5]}`, `{"unknown":1}`, `{}`, `{} `, `{}{}`,
		`[]`, `null`, ``, `{"name":"\ud800"}`, "{\"name\":\"\xff\"}", `{"name":"a"} x`, ` {"extra":{"a":{"b":{}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		obj, err := DecodeJSONObject(newBodyRequest(body))
		trimmed := bytes.TrimSpace(body)
		oneObject := json.Valid(body) && len(trimmed) > 0 && trimmed[0] == '{' && utf8.Valid(body)
		if err != nil {
			clientError(t, err, http.StatusBadRequest, http.StatusRequestEntityTooLarge)
			if oneObject && !bytes.Contains(body, []byte(`\u`)) {
				t.Fatalf("DecodeJSONObject refused one object (%v): %q", err, truncate(string(body)))
			}
		} else {
			if !oneObject {
				t.Fatalf("DecodeJSONObject accepted %q", truncate(string(body)))
			}
			for k, v := range obj {
				if !json.Valid(v) {
					t.Fatalf("member %q: %q", k, v)
				}
			}
		}
		var v fuzzRequestBody
		if err := DecodeJSON(newBodyRequest(body), &v); err != nil {
			clientError(t, err, http.StatusBadRequest, http.StatusRequestEntityTooLarge)
			return
		}
		if obj == nil {
			t.Fatalf("DecodeJSON accepted what DecodeJSONObject refused: %q", truncate(string(body)))
		}
		for k := range obj {
			if !slices.ContainsFunc(fuzzBodyFields, func(f string) bool { return strings.EqualFold(f, k) }) {
				t.Fatalf("DecodeJSON accepted unknown member %q", k)
			}
		}
	})
}

// textRoutes are the routes whose bodies have text people read or
// declared objects.
func textRoutes() []routes.Route {
	var out []routes.Route
	for _, rt := range routes.Table {
		if len(rt.TextFields)+len(rt.MultilineFields)+len(rt.Objects) > 0 && !rt.StreamsBody {
			out = append(out, rt)
		}
	}
	return out
}

// FuzzCheckBody: a JSON body of a route with text fields or declared
// objects (by index among them) through checkBody: a 400 (or 413) naming
// the problem, or the body left for the handler as sent but for its
// declared text NFC-normalized (byte for byte when that changed nothing),
// every declared text member free of control and bidi characters (newline
// and tab only in multi-line fields), every declared object member within
// its parameter's bound.
func FuzzCheckBody(f *testing.F) {
	rts := textRoutes()
	if len(rts) == 0 {
		f.Fatal("no route has text fields")
	}
	for i, rt := range rts {
		for _, field := range append(slices.Clone(rt.TextFields), rt.MultilineFields...) {
			for _, v := range []string{"Backend team", "a\u0085b", "rtl\u202eevil", "two\nlines\tx", "  padded\t", "e\u0301"} {
				b, _ := json.Marshal(map[string]any{field: v})
				f.Add(uint8(i), b)
				b, _ = json.Marshal(map[string]any{field: []any{"fine", v, nil}})
				f.Add(uint8(i), b)
			}
		}
	}
	for i, rt := range rts {
		for _, o := range rt.Objects {
			for _, p := range o.Params {
				for _, v := range []string{"main", "a\nb", "e\u0301", strings.Repeat("x", p.Limit()+1)} {
					b, _ := json.Marshal(map[string]any{o.Member: map[string]any{p.Name: v}, "status": "open"})
					f.Add(uint8(i), b)
				}
			}
		}
	}
	f.Add(uint8(0), []byte(`{"name":"a\ud800b"}`))
	f.Add(uint8(0), []byte("{\"name\":\"a\xffb\"}"))
	f.Add(uint8(0), []byte(`not json`))
	f.Fuzz(func(t *testing.T, i uint8, body []byte) {
		rt := rts[int(i)%len(rts)]
		r := newBodyRequest(body)
		if err := checkBody(rt, r); err != nil {
			var textErr *cleantext.Error
			if errors.As(err, &textErr) {
				if !slices.Contains(rt.TextFields, textErr.Field) && !slices.Contains(rt.MultilineFields, textErr.Field) && !objectParam(rt, textErr.Field) {
					t.Fatalf("error %v names no text field of %s %s", err, rt.Method, rt.Path)
				}
				return
			}
			clientError(t, err, http.StatusBadRequest, http.StatusRequestEntityTooLarge)
			return
		}
		rest, err := io.ReadAll(r.Body)
		if err != nil || (!bytes.Equal(rest, body) && !sameButNFC(rt, body, rest)) {
			t.Fatalf("the handler reads %q, %v; sent %q", truncate(string(rest)), err, truncate(string(body)))
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(rest, &obj) != nil {
			return // not an object: the handler's to refuse
		}
		check := func(field string, multiline bool) {
			raw, ok := obj[field]
			if !ok {
				return
			}
			var one string
			var many []*string
			var texts []string
			switch {
			case json.Unmarshal(raw, &one) == nil:
				texts = []string{one}
			case json.Unmarshal(raw, &many) == nil:
				for _, s := range many {
					if s != nil {
						texts = append(texts, *s)
					}
				}
			}
			for _, s := range texts {
				if err := readable(strings.Trim(s, " \t\r\n"), multiline); err != nil || !norm.NFC.IsNormalString(s) {
					t.Fatalf("%s %s: member %s %q passed: %v", rt.Method, rt.Path, field, s, err)
				}
			}
		}
		for _, field := range rt.TextFields {
			check(field, false)
		}
		for _, field := range rt.MultilineFields {
			check(field, true)
		}
		for _, o := range rt.Objects {
			var members map[string]json.RawMessage
			if json.Unmarshal(obj[o.Member], &members) != nil {
				continue
			}
			for _, p := range o.Params {
				var one string
				if json.Unmarshal(members[p.Name], &one) == nil && p.Kind == routes.Text &&
					(len(one) > p.Limit() || readable(one, p.Multiline) != nil || !norm.NFC.IsNormalString(one)) {
					t.Fatalf("%s %s: %s.%s %q passed", rt.Method, rt.Path, o.Member, p.Name, truncate(one))
				}
			}
		}
	})
}

// objectParam tells whether name is a parameter of one of the route's
// declared body objects.
func objectParam(rt routes.Route, name string) bool {
	for _, o := range rt.Objects {
		for _, p := range o.Params {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

// sameButNFC tells whether got is sent with the route's declared text
// (top-level members and declared object members) NFC-normalized, and
// nothing else changed.
func sameButNFC(rt routes.Route, sent, got []byte) bool {
	var a, b map[string]any
	if json.Unmarshal(sent, &a) != nil || json.Unmarshal(got, &b) != nil {
		return false
	}
	nfc := func(m map[string]any, name string) {
		switch v := m[name].(type) {
		case string:
			m[name] = norm.NFC.String(v)
		case []any:
			for i, s := range v {
				if s, ok := s.(string); ok {
					v[i] = norm.NFC.String(s)
				}
			}
		}
	}
	for _, f := range append(slices.Clone(rt.TextFields), rt.MultilineFields...) {
		nfc(a, f)
	}
	for _, o := range rt.Objects {
		if m, ok := a[o.Member].(map[string]any); ok {
			for _, p := range o.Params {
				nfc(m, p.Name)
			}
		}
	}
	return reflect.DeepEqual(a, b)
}

// readable is the rule of text people read, stated on its own.
func readable(s string, multiline bool) error {
	if !utf8.ValidString(s) {
		return errors.New("not UTF-8")
	}
	for _, r := range s {
		if multiline && (r == '\n' || r == '\t') {
			continue
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return fmt.Errorf("holds U+%04X", r)
		}
	}
	return nil
}
