package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/sariflog"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/acme/codescan-api/functions/projects/report"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
)

func input() report.Input {
	return report.Input{
		Project: "pay<ments>",
		Scan: scans.Scan{ID: "8f0c3a57-1c5e-4b8e-9d61-2f7a4b1e0c93", Branch: "main", Tool: "Semgrep OSS+CodeQL", RepoURL: "https://github.com/acme/payments",
			GitSHA: "9fceb02d0ae598e95dc970b74767f19372d61af8", CreatedAt: "2026-01-02T03:04:05Z"},
		Issues: []findings.Issue{
			{ID: "b1", Urgency: "HI", Status: "open", CWE: 89, FilePath: "app/db.py", Line: 42, RuleID: "sqli", Title: "SQL <b>injection</b> | raw", Fingerprint: "c:abc#2"},
			{ID: "a2", Urgency: "CR", Status: "open", CWE: 79, FilePath: "web/<x>.js", Line: 7, RuleID: "xss", Title: `<script>alert("x")</script>`, Fingerprint: "c:zzz"},
			{ID: "c3", Urgency: "LO", Status: "fixed", CWE: findings.NoCWE, FilePath: "README.md", RuleID: "", Title: "", Fingerprint: "c:abc"},
		},
	}
}

// The SARIF log validates against the official SARIF 2.1.0 schema
// (OASIS errata 01, committed as test data).
func TestSARIFValidatesAgainstTheSchema(t *testing.T) {
	schema := sarifSchema(t)
	for name, in := range map[string]report.Input{"issues": input(), "empty": {Scan: scans.Scan{ID: "x"}, Project: "p"}} {
		out, err := report.SARIF(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(schema, out); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	// The validator does reject: a log without its version, a result
	// level outside the enumeration, a URI that is none (formats asserted).
	for _, bad := range []string{
		`{"runs":[]}`,
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"level":"fatal"}]}]}`,
		`{"version":"2.1.0","$schema":"not a uri","runs":[]}`,
	} {
		if validate(schema, []byte(bad)) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
	out, _ := report.SARIF(input())
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct{ Name string } `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID              string            `json:"ruleId"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
				Properties          map[string]any    `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 2 || log.Runs[0].Tool.Driver.Name != "Semgrep OSS" || log.Runs[1].Tool.Driver.Name != "CodeQL" {
		t.Fatalf("one run per tool: %+v", log.Runs)
	}
	rs := log.Runs[0].Results
	// Fingerprint stems keep their occurrence order: c:abc before c:abc#2.
	if len(rs) != 3 || rs[0].PartialFingerprints[sariflog.FingerprintKey] != "c:abc" || rs[1].PartialFingerprints[sariflog.FingerprintKey] != "c:abc#2" {
		t.Fatalf("results %+v", rs)
	}
	if rs[1].Properties["cwe"] != "CWE-89" || rs[1].Properties["security-severity"] != "8.0" || rs[0].Properties["cwe"] != nil {
		t.Fatalf("properties %+v / %+v", rs[1].Properties, rs[0].Properties)
	}
}

// sarifSchema compiles the committed SARIF schema (draft 4, its own id),
// formats asserted as the SARIF specification requires of a valid log.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return schema
}

func validate(schema *jsonschema.Schema, log []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(log))
	if err != nil {
		return err
	}
	return schema.Validate(inst)
}

// Every value of the HTML page is escaped; nothing is loaded from elsewhere.
func TestHTMLEscapesEveryValue(t *testing.T) {
	out, err := report.HTML(input())
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	for _, raw := range []string{"<script>", "<b>injection", "pay<ments>", "web/<x>.js"} {
		if strings.Contains(page, raw) {
			t.Errorf("unescaped %q in page", raw)
		}
	}
	for _, want := range []string{"&lt;script&gt;", "pay&lt;ments&gt;", "CWE-89", "app/db.py:42", "3 issue(s): CR 1; HI 1; ME 0; LO 1;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, external := range []string{"src=", "href=", "<script"} {
		if strings.Contains(page, external) {
			t.Errorf("page is not self-contained: %q", external)
		}
	}
	// Most urgent first.
	if strings.Index(page, "CWE-79") > strings.Index(page, "CWE-89") {
		t.Error("CR issue listed after HI issue")
	}
}

func TestMarkdownEscapesTableCells(t *testing.T) {
	md := string(report.Markdown(input()))
	for _, want := range []string{"## Security scan of pay&lt;ments&gt; on main", "3 issue(s) · CR 1 · HI 1 · ME 0 · LO 1",
		`SQL &lt;b&gt;injection&lt;/b&gt; \| raw`, "| CR | CWE-79 | web/&lt;x&gt;.js:7 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	var rows int
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| Urgency") {
			rows++
			if n := strings.Count(l, " | "); n != 4 {
				t.Errorf("row %q has %d separators, want 4", l, n)
			}
		}
	}
	if rows != 3 {
		t.Errorf("%d rows", rows)
	}
	empty := string(report.Markdown(report.Input{Project: "p"}))
	if !strings.Contains(empty, "No issues found.") {
		t.Errorf("empty: %s", empty)
	}
}
