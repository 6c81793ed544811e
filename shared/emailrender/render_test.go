package emailrender_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/emailrender"
	"github.com/acme/codescan-api/shared/notify"
)

var update = flag.Bool("update", false, "rewrite the golden emails in testdata/email")

// goldenCase is one rendered email: a type, its data and the app URL.
type goldenCase struct {
	name, appURL, typ, data string
}

// hostile is put in every string of a payload: markup, both quotes, an
// ampersand, a plus (html/template writes &#43;), a javascript: URL, a
// NUL, a bidi override, non-ASCII and line breaks.
const hostile = "<script>alert(\"x&y\")</script> 'q' a+b javascript:alert(1) \u0000\u202e é\r\nnext  line"

// hostileURL is put in every id a link is built from: what a URL must
// percent-encode or keep as it is.
const hostileURL = "javascript:alert(1)/\"><b x='1'> é%41+&#?a=b"

func goldenCases(t *testing.T) []goldenCase {
	var out []goldenCase
	types := slices.Sorted(func(yield func(string) bool) {
		for k := range sampleData {
			if !yield(k) {
				return
			}
		}
	})
	for _, typ := range types {
		out = append(out, goldenCase{typ, "https://app.example", typ, sampleData[typ]})
		var v map[string]any
		if err := json.Unmarshal([]byte(sampleData[typ]), &v); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(replaceStrings(v, ""))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, goldenCase{typ + "-hostile", "https://app.example/", typ, string(b)})
	}
	// Lists of several items, a line of 0, and none at all.
	many := `{"scan_id":"s1","project_id":7,"project_name":"payments","branch":"main","count":3,"issues":[` +
		`{"id":"i1","title":"SQL injection","file_path":"a.py","line":4,"cwe":89,"urgency":"CR"},` +
		`{"id":"i2","title":"Path traversal","file_path":"b/c.py","line":0,"cwe":22,"urgency":"CR"},` +
		`{"id":"i3","title":"Command <injection>","file_path":"d.sh","line":1234567,"cwe":78,"urgency":"CR"}]}`
	out = append(out, goldenCase{"new_critical_issue-many", "https://app.example", "new_critical_issue", many},
		goldenCase{"new_high_issue-none", "https://app.example", "new_high_issue",
			`{"scan_id":"s1","project_id":7,"project_name":"p","branch":"b","count":0,"issues":[]}`},
		goldenCase{"policy_violation-rules", "https://app.example", "policy_violation",
			`{"project_id":7,"project_name":"payments","branch":"main","scan_id":"s1","count":5,"rules":[{"id":1,"slug":"a"},{"id":2,"slug":"b<c"},{"id":3,"slug":"d"}]}`},
		goldenCase{"policy_violation-norules", "https://app.example", "policy_violation",
			`{"project_id":7,"project_name":"payments","branch":"main","scan_id":"s1","count":0,"rules":[]}`},
	)
	// Links: each id a link is built from, hostile, under several app URLs
	// (none, a path with characters to encode, a script URL).
	for n, key := range []string{"issue_id", "scan_id", "integration_uuid", "webhook_id"} {
		typ := []string{"sla_breach", "scan_completed", "integration_expired", "webhook_disabled"}[n]
		var v map[string]any
		if err := json.Unmarshal([]byte(sampleData[typ]), &v); err != nil {
			t.Fatal(err)
		}
		v[key] = hostileURL
		b, _ := json.Marshal(v)
		out = append(out, goldenCase{"link-" + key, "https://app.example/base path/", typ, string(b)})
	}
	for n, app := range []string{"", "javascript:alert(1)", "https://app.example/a b?c=d&e=f+g#h", "HTTP://APP.EXAMPLE", "mailto:x@y", "//evil.example"} {
		out = append(out, goldenCase{fmt.Sprintf("app-%d", n), app, "scan_failed", sampleData["scan_failed"]})
	}
	return out
}

// replaceStrings puts hostile (named by its key) in every string of v.
func replaceStrings(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = replaceStrings(e, k)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = replaceStrings(e, key)
		}
		return v
	case string:
		return key + ":" + hostile
	}
	return v
}

// Every email renders exactly as testdata/email holds it (subject, text
// and HTML, byte for byte), hostile values escaped. The golden files were
// written by the text/template and html/template renderer this package
// replaced; the one change since is numbers of a million and more, which
// the templates printed as floats (1.234567e+06).
func TestEmailsMatchGoldenFiles(t *testing.T) {
	for _, c := range goldenCases(t) {
		payload := fmt.Sprintf(`{"type":%q,"id":"evt-1","created_at":"2026-11-23T08:00:00Z","company_id":1,"data":%s}`, c.typ, c.data)
		m, err := emailrender.Render(c.appURL, "to@example.test", []byte(payload))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := visible("Subject: " + m.Subject + "\n--- text\n" + m.Text + "--- html\n" + m.HTML + "\n")
		path := filepath.Join("testdata", "email", c.name+".golden")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs from %s:\n%s", c.name, path, diffLines(string(want), got))
		}
		if strings.Contains(m.HTML, "<script") || strings.Contains(m.HTML, `href="javascript:`) {
			t.Errorf("%s: HTML not escaped:\n%s", c.name, m.HTML)
		}
	}
}

// visible writes the control characters but the line feed as \xNN, so
// the golden files stay text (no payload holds a backslash).
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 && r != '\n' || r == 0x7f {
			fmt.Fprintf(&b, `\x%02x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// diffLines shows the first differing line of want and got.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d\nwant %q\ngot  %q", i+1, a, b)
		}
	}
	return "(equal lines)"
}

func TestEveryTypeHasAnEmail(t *testing.T) {
	for _, code := range append(notify.Codes(), notify.TypeWebhookDisabled) {
		if _, ok := sampleData[code]; !ok {
			t.Errorf("no sample data for %s", code)
		}
	}
	for code, data := range sampleData {
		m, err := emailrender.Render("https://app.example", "a@b.test",
			[]byte(fmt.Sprintf(`{"type":%q,"id":"e1","created_at":"2026-11-23T08:00:00Z","company_id":1,"data":%s}`, code, data)))
		if err != nil {
			t.Fatalf("%s: %v", code, err)
		}
		for _, part := range []string{m.Subject, m.Text, m.HTML} {
			if strings.Contains(part, "%!") {
				t.Errorf("%s: missing value in %q", code, part)
			}
		}
		if !strings.Contains(m.Text, "https://app.example/") || !strings.Contains(m.HTML, `href="https://app.example/`) {
			t.Errorf("%s: no link back: %q", code, m.Text)
		}
	}
	if _, err := emailrender.Render("https://app.example", "a@b.test", []byte(`{"type":"nope","id":"e","data":{}}`)); err == nil {
		t.Error("unknown type rendered")
	}
	m, err := emailrender.Render("https://app.example", "a@b.test", []byte(`{"type":"scan_failed","id":"e","data":{"project_name":"<script>x</script>","branch":"b","tool":"t","failed_reason":"r","scan_id":"s"}}`))
	if err != nil || strings.Contains(m.HTML, "<script>") {
		t.Errorf("HTML not escaped: %q (%v)", m.HTML, err)
	}
}

// sampleData is, per type, the data its producer records (documented in
// the OpenAPI document's WebhookPayload).
var sampleData = map[string]string{
	"scan_completed":          `{"scan_id":"s1","project_id":7,"project_name":"payments","branch":"main","tool":"semgrep","findings":3,"completed_at":"2026-11-23T08:00:00Z"}`,
	"scan_failed":             `{"scan_id":"s1","project_id":7,"project_name":"payments","branch":"main","tool":"semgrep","failed_reason":"report truncated"}`,
	"new_critical_issue":      `{"scan_id":"s1","project_id":7,"project_name":"payments","branch":"main","count":1,"issues":[{"id":"i1","title":"SQL injection","file_path":"a.py","line":4,"cwe":89,"urgency":"CR"}]}`,
	"new_high_issue":          `{"scan_id":"s1","project_id":7,"project_name":"payments","branch":"main","count":1,"issues":[{"id":"i1","title":"XSS","file_path":"a.js","line":0,"cwe":79,"urgency":"HI"}]}`,
	"issue_status_changed":    `{"issue_id":"i1","project_id":7,"project_name":"payments","title":"SQL injection","previous_status":"open","status":"fixed","changed_by":3}`,
	"sla_breach":              `{"issue_id":"i1","project_id":7,"project_name":"payments","title":"SQL injection","urgency":"CR","first_detection_date":"2026-11-01T00:00:00Z","due_date":"2026-11-08T00:00:00Z"}`,
	"component_affected":      `{"advisory_id":"GHSA-jfh8-c2jp-5v3q","package":"pkg:maven/org.apache.logging.log4j/log4j-core","ecosystem":"Maven","affected_versions":["2.14.1"],"total_holders":1,"holders":[{"project_id":7,"project_name":"payments","branch":"main","version":"2.14.1","relation":"direct","engine":"cyclonedx"}],"truncated":false,"scan_id":"s1","project_id":7}`,
	"risk_acceptance_expired": `{"issue_id":"i1","project_id":7,"project_name":"payments","branch":"main","title":"SQL injection","urgency":"CR","expires_at":"2026-12-01T00:00:00Z","owner":3,"accepted_by":3,"accepted_at":"2026-11-01T00:00:00Z","reopened_at":"2026-12-01T00:10:00Z"}`,
	"weekly_digest":           `{"week_start":"2026-11-16","week_end":"2026-11-22","open_issues":12,"open_by_urgency":{"CR":1,"HI":2,"ME":4,"LO":5},"overdue":1,"due_soon":2}`,
	"integration_expired":     `{"integration_uuid":"u1","name":"GitHub","account_name":"acme","base_url":"https://api.github.com","reason":"the host rejected the token (401)"}`,
	"policy_violation":        `{"project_id":7,"project_name":"payments","branch":"main","scan_id":"s1","count":2,"rules":[{"id":3,"slug":"no-critical"}]}`,
	"webhook_disabled":        `{"webhook_id":"w1","url":"https://hooks.example.com/x","failing_since":"2026-11-20T00:00:00Z","reason":"every delivery failed since 2026-11-20T00:00:00Z"}`,
}
