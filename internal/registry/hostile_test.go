package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store"
)

// hostileCase is one request a hostile client sends, and what the edge must
// answer: status and the one error body (in the route's form), naming
// what is wrong.
type hostileCase struct {
	name   string
	rt     routes.Route
	method string
	target string // path and query, under /api/v1
	header http.Header
	body   []byte
	status int
	form   routes.ErrorForm
	names  string // the message must contain this (a parameter, a field)
	exact  bool   // the message must be names exactly
}

// badValues are query values a parameter of its kind must refuse,
// percent-encoded as a query carries them.
func badValues(p routes.Param) []string {
	switch p.Kind {
	case routes.Text:
		return append([]string{strings.Repeat("q", p.Limit()+1), "%FF%FE"}, badQueryText...)
	case routes.FilePath:
		return append([]string{strings.Repeat("q", p.Limit()+1), "%FF%FE"}, badFilePaths...)
	case routes.ID:
		return badIDs
	case routes.UUID:
		return badUUIDs
	case routes.Int:
		return []string{fmt.Sprint(p.Min - 1), fmt.Sprint(p.Max + 1), "1e3", "x", "99999999999999999999"}
	case routes.Enum:
		return []string{"NOT-" + p.Values[0]}
	case routes.Bool:
		return badBools
	}
	panic(fmt.Sprintf("parameter %s: kind %d has no hostile values", p.Name, p.Kind))
}

// servesMethod tells whether some route serves method on path.
func servesMethod(path, method string) bool {
	return slices.ContainsFunc(routes.Table, func(rt routes.Route) bool { return rt.Path == path && rt.Method == method })
}

// Values a hostile client puts where an id or uuid belongs.
var (
	badIDs   = []string{"01", "+1", "0", "-1", "1.0", "1e3", "0x10", "99999999999999999999", "%201", "1%20", "1%00", "%EF%BC%91"}
	goodUUID = "0b3e8a52-6d1c-4f7e-9a1b-2c3d4e5f6a7b"
	badUUIDs = []string{"not-a-uuid", strings.ReplaceAll(goodUUID, "-", ""), "%7B" + goodUUID + "%7D",
		"urn:uuid:" + goodUUID, goodUUID + "0", strings.Replace(goodUUID, "b", "g", 1), "%20" + goodUUID + "x"}
	badText = []string{"a\x00b", "bell\a", "del\x7f", "c1\u0085", "tab\tin a name", "new\nline", "cr\rx", "rtl\u202eevil", "embed\u202a", "isolate\u2066x", "pdi\u2069"}
	// Query text, percent-encoded: NUL, newline, carriage return, tab,
	// SOH, DEL, a C1 control, RLO and an isolate.
	badQueryText = []string{"a%00b", "a%0ab", "a%0db", "a%09b", "a%01b", "a%7fb", "a%C2%85b", "rtl%E2%80%AEevil", "iso%E2%81%A6x"}
	// A file path adds what the handler's second percent-decoding would
	// turn into one (%2500 is %00 once the query is read), and names no
	// file system holds.
	badFilePaths = append(slices.Clone(badQueryText), "src/a%2500b.go", "src%2Fa%250ab.go", "src/rtl%25E2%2580%25AE.go",
		strings.Repeat("p", 768), "src/"+strings.Repeat("d", routes.MaxSegmentBytes+1)+"/a.go", "src%5C"+strings.Repeat("w", routes.MaxSegmentBytes+1),
		"src/"+strings.Repeat("%C3%A9", routes.MaxSegmentBytes/2+1))
	badBools = []string{"maybe", "2", "yes", "truee", "%00"}
	// Page tokens no list issued: garbage, and forged ones (base64 JSON of
	// a key), which must not be read as keys.
	badTokens = []string{"x.y", "eyJQSyI6IkMjMSJ9", "e30", "%2F%2F%2F"}
)

// validValue is a value the edge accepts for a parameter.
func validValue(p routes.Param) string {
	switch p.Kind {
	case routes.ID:
		return "1"
	case routes.UUID:
		return goodUUID
	case routes.Int:
		return fmt.Sprint(p.Min)
	case routes.Enum:
		return p.Values[0]
	}
	if p.Name == "type_code" {
		return notify.Codes()[0]
	}
	return "x"
}

// basePath is the route's path with valid path parameters, and the query
// a handler needs to read the body (so a body limit is reached).
func basePath(rt routes.Route, override map[string]string) string {
	path := rt.Path
	for _, n := range rt.PathParams() {
		p, _ := rt.Declared(n)
		v, ok := override[n]
		if !ok {
			v = validValue(p)
		}
		path = strings.Replace(path, "{"+n+"}", v, 1)
	}
	switch rt.Path {
	case "/scan-upload":
		return path + "?engine=sarif&project=hostile&run_id=" + goodUUID
	case "/ci-data-upload", "/git-config-upload":
		return path + "?run_id=" + goodUUID
	case "/code-upload":
		return path + "?path=src/main.go&run_id=" + goodUUID
	}
	return path
}

func withQuery(path, query string) string {
	if strings.Contains(path, "?") {
		return path + "&" + query
	}
	return path + "?" + query
}

func hasBody(rt routes.Route) bool {
	return rt.Method == "POST" || rt.Method == "PATCH" || rt.Method == "PUT"
}

// hostileCases generates the table from the route table: every route,
// every declared parameter and text field, credentials and encodings.
func hostileCases(t testing.TB, key, otherKey, bearer string, seed seeded) []hostileCase {
	auth1 := http.Header{auth.APIKeyHeader: {key}}
	var cases []hostileCase
	for _, rt := range routes.Table {
		add := func(c hostileCase) {
			c.rt = rt
			if c.method == "" {
				c.method = rt.Method
			}
			if c.header == nil {
				c.header = auth1
			}
			if c.body == nil && hasBody(rt) {
				c.body = []byte("{}")
			}
			cases = append(cases, c)
		}
		route := rt.Method + " " + rt.Path
		// Path parameters: too long, and every non-canonical form.
		for _, n := range rt.PathParams() {
			p, _ := rt.Declared(n)
			long := strings.Repeat("7", max(p.Limit(), 64)+1)
			add(hostileCase{name: route + " " + n + " too long", target: basePath(rt, map[string]string{n: long}), status: 400, form: rt.Errors, names: n})
			var bad []string
			switch p.Kind {
			case routes.ID:
				bad = badIDs
			case routes.UUID:
				bad = badUUIDs
			}
			for _, v := range bad {
				add(hostileCase{name: route + " " + n + "=" + v, target: basePath(rt, map[string]string{n: v}), status: 400, form: rt.Errors, names: n})
			}
		}
		// Declared query parameters: past their bound, and malformed.
		for _, p := range rt.Params {
			if slices.Contains(rt.PathParams(), p.Name) {
				continue
			}
			for _, v := range badValues(p) {
				add(hostileCase{name: route + " ?" + p.Name + "=" + truncate(v), target: withQuery(basePath(rt, nil), p.Name+"="+v), status: 400, form: rt.Errors, names: p.Name})
			}
			// A page token no list issued, to a list that has rows (the
			// seeded scan and its project), so the token is what is read.
			if p.Name == "next_page_token" || p.Name == "page_token" {
				base := basePath(rt, map[string]string{"scan_id": seed.scanID, "webhook_id": seed.webhookID})
				if slices.ContainsFunc(rt.Params, func(p routes.Param) bool { return p.Name == "project" }) {
					base = withQuery(base, "project="+seed.project)
				}
				for _, v := range badTokens {
					add(hostileCase{name: route + " ?" + p.Name + "=" + v, target: withQuery(base, p.Name+"="+v), status: 400, form: rt.Errors, names: "Invalid page token", exact: true})
				}
			}
		}
		// Members of the body's declared objects, as their parameters.
		for _, o := range rt.Objects {
			for _, p := range o.Params {
				for _, v := range badValues(p) {
					raw, err := url.QueryUnescape(v)
					if err != nil {
						t.Fatal(err)
					}
					if !utf8.ValidString(raw) {
						continue // JSON carries no invalid UTF-8 (the body classes below send it raw)
					}
					if p.Multiline && (raw == "a\nb" || raw == "a\tb") {
						continue // lines and tabs are a multi-line member's to hold
					}
					for _, shape := range []any{raw, []string{validValue(p), raw}} {
						b, _ := json.Marshal(map[string]any{o.Member: map[string]any{p.Name: shape}})
						add(hostileCase{name: fmt.Sprintf("%s body %s.%s=%s", route, o.Member, p.Name, truncate(fmt.Sprint(shape))), target: basePath(rt, nil), body: b, status: 400, form: rt.Errors, names: p.Name})
					}
				}
			}
		}
		// Any query value: over the global bound, and 400 KB (the log must
		// not grow with it).
		for _, n := range []int{routes.MaxQueryValueBytes + 1, 400 << 10} {
			add(hostileCase{name: fmt.Sprintf("%s unknown parameter of %d bytes", route, n), target: withQuery(basePath(rt, nil), "zz="+strings.Repeat("z", n)), status: 400, form: rt.Errors})
		}
		// Text people read, in the body.
		for _, f := range append(slices.Clone(rt.TextFields), rt.MultilineFields...) {
			for _, v := range badText {
				if (v == "tab\tin a name" || v == "new\nline") && slices.Contains(rt.MultilineFields, f) {
					continue
				}
				for _, shape := range []any{v, []string{"fine", v}} {
					b, _ := json.Marshal(map[string]any{f: shape})
					add(hostileCase{name: fmt.Sprintf("%s body %s=%q", route, f, shape), target: basePath(rt, nil), body: b, status: 400, form: rt.Errors, names: f})
				}
			}
			b := []byte(`{"` + f + `":"a\ud800b"}`)
			add(hostileCase{name: route + " body " + f + " lone surrogate", target: basePath(rt, nil), body: b, status: 400, form: rt.Errors, names: "UTF-8"})
			b = []byte("{\"" + f + "\":\"a\xffb\"}")
			add(hostileCase{name: route + " body " + f + " invalid UTF-8", target: basePath(rt, nil), body: b, status: 400, form: rt.Errors, names: "UTF-8"})
		}
		// No credential, or one nobody was given.
		if rt.Access != routes.Public {
			for name, h := range map[string]http.Header{"no credential": {}, "unknown key": {auth.APIKeyHeader: {"not-a-key"}}} {
				target := basePath(rt, nil)
				if rt.Access == routes.PathToken {
					target = basePath(rt, map[string]string{routes.TokenParam: "not-a-key"})
				}
				add(hostileCase{name: route + " " + name, target: target, header: h, status: 401, form: routes.ErrorField, names: "Missing or invalid authorization header", exact: true})
			}
		}
		// A method the path does not serve.
		for _, m := range []string{"PUT", "DELETE", "PATCH", "POST", "GET"} {
			if !servesMethod(rt.Path, m) {
				add(hostileCase{name: route + " as " + m, method: m, target: basePath(rt, nil), status: 405, form: rt.Errors, names: "Method not allowed", exact: true})
				break
			}
		}
		// One credential.
		for name, h := range map[string]http.Header{
			"two keys, another company's first": {auth.APIKeyHeader: {otherKey, key}},
			"two bearer tokens":                 {"Authorization": {"Bearer " + bearer, "Bearer " + bearer}},
			"key and bearer":                    {auth.APIKeyHeader: {key}, "Authorization": {"Bearer " + bearer}},
			"empty key then key":                {auth.APIKeyHeader: {"", key}},
			"key and empty authorization":       {auth.APIKeyHeader: {key}, "Authorization": {""}},
		} {
			add(hostileCase{name: route + " " + name, target: basePath(rt, nil), header: h, status: 400, form: rt.Errors, names: "ambiguous credentials"})
		}
		// Encodings.
		for _, enc := range [][]string{{"br"}, {"compress"}, {"deflate"}, {"gzip, br"}, {"gzip", "gzip"}, {"x-unknown"}} {
			h := http.Header{auth.APIKeyHeader: {key}, "Content-Encoding": enc}
			add(hostileCase{name: route + " Content-Encoding " + strings.Join(enc, "|"), target: basePath(rt, nil), header: h, status: 415, form: rt.Errors, names: "Content-Encoding"})
		}
		for _, c := range evaluated(rt) {
			add(c)
		}
		// A retry key that is no key: the job is not started twice, nor once.
		if rt.Idempotent {
			for name, v := range map[string][]string{"empty": {""}, "too long": {strings.Repeat("k", httpapi.MaxIdempotencyKey+1)},
				"with a space": {"a b"}, "control": {"a\x1bb"}, "non-ASCII": {"clé"}, "twice": {"a", "b"}} {
				h := http.Header{auth.APIKeyHeader: {key}, httpapi.IdempotencyKeyHeader: v}
				add(hostileCase{name: route + " Idempotency-Key " + name, target: basePath(rt, nil), header: h, status: 400, form: rt.Errors, names: "Idempotency-Key"})
			}
		}
		if hasBody(rt) {
			h := http.Header{auth.APIKeyHeader: {key}, "Content-Encoding": {"gzip"}}
			bomb := testenv.Gzip(t, bytes.Repeat([]byte(" "), int(rt.DecodedLimit())+1))
			add(hostileCase{name: route + " gzip bomb", target: basePath(rt, nil), header: h, body: bomb, status: 413, form: rt.Errors})
			add(hostileCase{name: route + " broken gzip", target: basePath(rt, nil), header: h, body: []byte("\x1f\x8b\x08\x00garbage"), status: 400, form: rt.Errors, names: "gzip"})
		}
	}
	return cases
}

// evaluated are the values of a route's body that the service evaluates
// later, on every finding: globs whose backtracking expansion doubled per
// group, and CWE ids no catalogue holds. Each is refused when written.
func evaluated(rt routes.Route) []hostileCase {
	globs := []string{strings.Repeat("{*,*}", 22), strings.Repeat("{*,*}", 99), strings.Repeat("*a", 40)}
	var bodies []string
	switch rt.Method + " " + rt.Path {
	case "POST /triage-rules":
		for _, g := range globs {
			bodies = append(bodies, `{"matcher":{"path":"`+g+`"},"action":{"urgency":"LO"}}`)
		}
		bodies = append(bodies, `{"matcher":{"cwe":99999},"action":{"urgency":"LO"}}`)
	case "POST /blocking-rules":
		for _, g := range globs {
			bodies = append(bodies, `{"slug":"globs","name":"globs","conditions":{"paths":["`+g+`"]}}`)
		}
		bodies = append(bodies, `{"slug":"cwes","name":"cwes","conditions":{"cwes":["CWE-99999"]}}`)
	}
	var out []hostileCase
	for _, b := range bodies {
		out = append(out, hostileCase{name: rt.Method + " " + rt.Path + " evaluated " + truncate(b), target: basePath(rt, nil), body: []byte(b), status: 400, form: rt.Errors})
	}
	return out
}

func truncate(s string) string {
	if len(s) > 24 {
		return fmt.Sprintf("%s…(%d bytes)", s[:24], len(s))
	}
	return s
}

// TestHostileInput sends the table to the whole API (every group mounted as
// the dev server does) and checks each answer, that nothing was stored and
// that the log grew by less than 8 KB.
func TestHostileInput(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	admin := env.User(t, acme, testenv.UserSpec{Email: "root@acme.test", IsAdmin: true, Permissions: routes.AllPermissions})
	other := env.Company(t, "Globex")
	mux := registry.Mux(env.Deps)
	seed := seedScan(t, env, mux, admin)
	cases := hostileCases(t, admin.APIKey, other.Admin.APIKey, env.Token(t, admin), seed)
	fmt.Printf("hostile-input table: %d cases over %d routes\n", len(cases), len(routes.Table))
	// One ordinary request first: it records the key's last use (at most
	// once every five minutes), which is not the hostile requests' doing.
	if res := testenv.Do(t, mux, "GET", "/verify", "", testenv.Key(admin)...); res.Status != 200 {
		t.Fatalf("verify: %d %s", res.Status, res.Body)
	}
	before := scanTable(t, env.Store)
	maxGrowth := 0
	defer func() { fmt.Printf("hostile-input table: largest log growth of one case %d bytes\n", maxGrowth) }()
	for _, c := range cases {
		logBefore := env.Logs.Len()
		req := httptest.NewRequest(c.method, "http://127.0.0.1"+routes.BasePath+c.target, bytes.NewReader(c.body))
		for k, vs := range c.header {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, rec.Code, truncate(rec.Body.String()), c.status)
			continue
		}
		if msg, ok := errorMessage(rec.Body.Bytes(), c.form); !ok || !strings.Contains(msg, c.names) || (c.exact && msg != c.names) {
			t.Errorf("%s: body %s is not the one error body naming %q", c.name, rec.Body, c.names)
		}
		if v := rec.Header().Get("X-Content-Type-Options"); v != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", c.name, v)
		}
		grew := env.Logs.Len() - logBefore
		maxGrowth = max(maxGrowth, grew)
		if grew >= 8<<10 {
			t.Errorf("%s: the log grew by %d bytes", c.name, grew)
		}
	}
	if after := scanTable(t, env.Store); !slices.Equal(before, after) {
		t.Errorf("hostile requests changed the store: %d items before, %d after", len(before), len(after))

	}
}

// seeded is a project with one ingested scan, and a webhook, so lists have
// rows to page.
type seeded struct{ project, scanID, webhookID string }

// seedScan uploads a SARIF report of two findings and ingests it.
func seedScan(t *testing.T, env *testenv.Env, mux http.Handler, u testenv.User) seeded {
	const report = `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"Semgrep OSS","rules":[` +
		`{"id":"sqli","shortDescription":{"text":"Raw SQL"},"properties":{"security-severity":"9.1","tags":["CWE-89"]}}]}},"results":[` +
		`{"ruleId":"sqli","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"app/a.py"},"region":{"startLine":3}}}]},` +
		`{"ruleId":"sqli","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"app/b.py"},"region":{"startLine":5}}}]}]}]}`
	s := seeded{project: "hostile-seed"}
	res := testenv.Do(t, mux, "POST", "/scan-upload?engine=sarif&branch=main&project="+s.project+"&run_id=0b3e8a52-6d1c-4f7e-9a1b-000000000001", report, testenv.Key(u)...)
	var out struct {
		ScanID string `json:"sast_scan_id"`
	}
	if res.Status != 200 {
		t.Fatalf("seed upload: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &out)
	env.Ingest(t, u.CompanyID, out.ScanID)
	s.scanID = out.ScanID
	res = testenv.Do(t, mux, "POST", "/webhooks", `{"url":"https://hooks.example.com/in","types":["scan_completed"]}`, testenv.Key(u)...)
	var hook struct {
		Webhook struct {
			ID string `json:"id"`
		} `json:"webhook"`
	}
	if res.Status != http.StatusCreated {
		t.Fatalf("seed webhook: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &hook)
	if s.webhookID = hook.Webhook.ID; s.webhookID == "" {
		t.Fatalf("seed webhook: no id in %s", res.Body)
	}
	return s
}

// errorMessage reads the one error body of a form: exactly
// {"error": message}, {"status": "error", "message": message}, or the
// gate's {"message": message} with its three slug lists.
func errorMessage(body []byte, form routes.ErrorForm) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return "", false
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(m[k], &s)
		return s
	}
	switch form {
	case routes.StatusMessage:
		return str("message"), len(m) == 2 && str("status") == "error" && str("message") != ""
	case routes.BlockOnMessage:
		for _, k := range []string{"unknown_slugs", "inactive_slugs", "non_ci_slugs"} {
			var list []string
			if json.Unmarshal(m[k], &list) != nil || list == nil {
				return "", false
			}
		}
		return str("message"), len(m) == 4 && str("message") != ""
	}
	return str("error"), len(m) == 1 && str("error") != ""
}

// scanTable reads every item of the test table (a Scan is fine in a test)
// as sorted JSON lines, to compare the store before and after.
func scanTable(t testing.TB, st *store.Store) []string {
	var out []string
	p := dynamodb.NewScanPaginator(st.Client(), &dynamodb.ScanInput{TableName: aws.String(st.TableName()), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			b, err := json.Marshal(item)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
	}
	slices.Sort(out)
	return out
}
