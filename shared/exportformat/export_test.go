package exportformat_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/acme/codescan-api/shared/exploitfeed"
	"github.com/acme/codescan-api/shared/exportformat"
)

var (
	t0        = time.Date(2025, 5, 2, 9, 30, 0, 0, time.UTC)
	t1        = time.Date(2025, 6, 10, 17, 5, 0, 0, time.UTC)
	yes, no   = true, false
	log4jEPSS = exploitfeed.EPSS{Score: 0.94358, Percentile: 0.9996, Date: "2026-03-28"}
)

// kev reads an entry of the real catalogue excerpt.
func kev(t testing.TB, id string) *exploitfeed.KEV {
	t.Helper()
	f, err := os.Open("../exploitfeed/testdata/kev-2025-06-09-excerpt.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := exploitfeed.ParseKEV(f)
	if err != nil {
		t.Fatal(err)
	}
	k, ok := c.Entries[id]
	if !ok {
		t.Fatalf("%s not in the catalogue excerpt", id)
	}
	return &k
}

// fixture is a mixed export: SAST findings of two tools and SCA findings
// in every triage status, one of each enrichment state.
func fixture(t testing.TB) []exportformat.Row {
	log4j := kev(t, "CVE-2021-44228")
	sca := func(id, status, reason string) exportformat.Row {
		return exportformat.Row{ID: id, Project: "payments", Branch: "main", Tool: "osv-scanner", Rule: "GHSA-jfh8-c2jp-5v3q",
			Title: "Remote code injection in Log4j", CWE: 502, Path: "pom.xml", Urgency: "CR", Status: status,
			StatusReason: reason, FirstSeen: t0, LastSeen: t1, Package: "org.apache.logging.log4j:log4j-core",
			Ecosystem: "Maven", Version: "2.14.1", FixedVersion: "2.15.0",
			Advisories: []string{"GHSA-jfh8-c2jp-5v3q", "CVE-2021-44228"},
			Exploit:    &exportformat.Exploit{KEV: log4j, EPSS: &log4jEPSS}}
	}
	rows := []exportformat.Row{
		{ID: "0c5e2b1e-3f4a-5b6c-8d7e-9f0a1b2c3d4e", Project: "payments", Branch: "main", Tool: "gosec", Rule: "G201",
			Title: "SQL string formatting", CWE: 89, Path: "internal/db/query.go", Line: 42, Urgency: "HI", Status: "open",
			Fingerprint: "a1b2c3", FirstSeen: t0, LastSeen: t1},
		{ID: "1d6f3c2f-4a5b-6c7d-9e8f-0a1b2c3d4e5f", Project: "payments", Branch: "main", Tool: "semgrep",
			Rule: "python.django.security.audit.xss", Title: "=HYPERLINK(\"http://evil\")", Path: "web/views/a b.py", Line: 7,
			Urgency: "ME", Status: "false_positive", StatusReason: "-escaped by the template", FirstSeen: t0},
		{ID: "2e7a4d3a-5b6c-7d8e-0f9a-1b2c3d4e5f6a", Project: "payments", Branch: "main", Tool: "gosec", Rule: "G401",
			Title: "Weak crypto", CWE: 328, Path: "crypto.go", Line: 3, Urgency: "LO", Status: "accepted_risk",
			StatusReason: "@legacy", FirstSeen: t0, LastSeen: t1},
		sca("3f8b5e4b-6c7d-8e9f-1a0b-2c3d4e5f6a7b", "open", ""),
		sca("4a9c6f5c-7d8e-9f0a-2b1c-3d4e5f6a7b8c", "fix_in_progress", "PR #12"),
		sca("5b0d7a6d-8e9f-0a1b-3c2d-4e5f6a7b8c9d", "accepted_risk", "internal tool only"),
		sca("6c1e8b7e-9f0a-1b2c-4d3e-5f6a7b8c9d0e", "fixed", ""),
		sca("7d2f9c8f-0a1b-2c3d-5e4f-6a7b8c9d0e1f", "false_positive", "shaded copy, not the vulnerable class"),
		sca("8e3a0d9a-1b2c-3d4e-6f5a-7b8c9d0e1f2a", "suppressed", "nosemgrep: JNDI lookups disabled"),
		sca("9f4b1e0b-2c3d-4e5f-7a6b-8c9d0e1f2a3b", "duplicate", "same as 3f8b5e4b"),
		{ID: "a05c2f1c-3d4e-5f6a-8b7c-9d0e1f2a3b4c", Project: "payments", Branch: "main", Tool: "osv-scanner",
			Rule: "GO-2024-2687", Title: "HTTP/2 CONTINUATION flood in net/http", Path: "go.mod", Urgency: "ME",
			Status: "suppressed", StatusReason: "server not exposed", FirstSeen: t0, LastSeen: t1, Package: "golang.org/x/net",
			Ecosystem: "Go", Version: "0.22.0", FixedVersion: "0.23.0", Advisories: []string{"GO-2024-2687", "GHSA-4v7x-pqxf-cx7m"},
			Reachable: &no, Exploit: &exportformat.Exploit{}},
		{ID: "b16d3a2d-4e5f-6a7b-9c8d-0e1f2a3b4c5d", Project: "payments", Branch: "main", Tool: "osv-scanner",
			Rule: "PYSEC-2023-74", Title: "requests leaks Proxy-Authorization", Path: "requirements.txt", Urgency: "ME",
			Status: "open", FirstSeen: t0, Package: "requests", Ecosystem: "PyPI", Version: "2.30.0", FixedVersion: "2.31.0",
			Advisories: []string{"PYSEC-2023-74", "CVE-2023-32681"}, Reachable: &yes},
	}
	return rows
}

// source serves rows and counts its passes.
func source(rows []exportformat.Row, passes *int) exportformat.Source {
	return func(yield func(exportformat.Row) error) error {
		*passes++
		for _, r := range rows {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
}

func write(t *testing.T, f exportformat.Format, rows []exportformat.Row) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	passes := 0
	n, err := exportformat.Write(&buf, f, source(rows, &passes), exportformat.Options{Project: "payments", Time: t1,
		Serial: "3e671687-395b-41f5-a30f-a58921a69b79"})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), n
}

// The CSV has a header and one record per row given, each cell guarded
// against formula injection, and reads back field for field.
func TestCSVRoundTrip(t *testing.T) {
	rows := fixture(t)
	for i := range 1000 {
		rows = append(rows, exportformat.Row{ID: fmt.Sprintf("gen-%04d", i), Project: "payments", Tool: "gosec", Rule: "G104",
			Title: "multi\nline, \"quoted\"", Path: "x.go", Line: i + 1, Urgency: "LO", Status: "open"})
	}
	out, n := write(t, exportformat.CSV, rows)
	if n != len(rows) {
		t.Fatalf("wrote %d rows, gave %d", n, len(rows))
	}
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(rows)+1 {
		t.Fatalf("%d records, want header + %d", len(recs), len(rows))
	}
	head := recs[0]
	col := func(rec []string, name string) string { return rec[slices.Index(head, name)] }
	for i, r := range rows {
		if got := col(recs[i+1], "id"); got != r.ID {
			t.Fatalf("record %d id %q, want %q", i, got, r.ID)
		}
	}
	xss, weak, log4j, xnet, req := recs[2], recs[3], recs[4], recs[11], recs[12]
	for _, c := range []struct{ got, want string }{
		{col(xss, "title"), `'=HYPERLINK("http://evil")`},
		{col(xss, "status_reason"), "'-escaped by the template"},
		{col(weak, "status_reason"), "'@legacy"},
		{col(xss, "path"), "web/views/a b.py"},
		{col(recs[1], "cwe"), "CWE-89"},
		{col(recs[1], "line"), "42"},
		{col(recs[1], "first_seen"), "2025-05-02T09:30:00Z"},
		{col(recs[1], "kev"), ""},
		{col(log4j, "advisories"), "GHSA-jfh8-c2jp-5v3q CVE-2021-44228"},
		{col(log4j, "kev"), "true"},
		{col(log4j, "kev_date_added"), "2021-12-10"},
		{col(log4j, "kev_due_date"), "2021-12-24"},
		{col(log4j, "kev_ransomware"), "true"},
		{col(log4j, "epss"), "0.94358"},
		{col(log4j, "epss_percentile"), "0.9996"},
		{col(xnet, "kev"), "false"},
		{col(xnet, "epss"), ""},
		{col(xnet, "reachable"), "false"},
		{col(req, "kev"), ""},
		{col(req, "reachable"), "true"},
		{col(recs[len(recs)-1], "title"), "multi\nline, \"quoted\""},
	} {
		if c.got != c.want {
			t.Errorf("cell %q, want %q", c.got, c.want)
		}
	}
}

// A cell a spreadsheet could read as a formula starts with a quote: the
// operators, their full-width forms, leading white space (skipped before
// a formula is read) and a double quote; text is cleaned first, so a
// control character is written out and starts nothing.
func TestCSVFormulaGuard(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"=1+1", "'=1+1"}, {"+1", "'+1"}, {"-1", "'-1"}, {"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"}, {"\nx", "'\nx"}, {"\rx", "'\nx"}, // a carriage return is the line end it was
		{" =1+1", "' =1+1"}, {"  @x", "'  @x"}, {`"=1+1"`, `'"=1+1"`},
		{"\uFF1D1+1", "'\uFF1D1+1"}, {"\uFF0B1", "'\uFF0B1"}, {"\uFF0D1", "'\uFF0D1"}, {"\uFF20SUM(A1)", "'\uFF20SUM(A1)"},
		{"a=b", "a=b"}, {"'quoted", "'quoted"}, {"", ""}, {"plain", "plain"}, {"日本語", "日本語"}, {"1-2", "1-2"},
		{"\x00=1", "<U+0000>=1"}, {"\u202e=1", "<U+202E>=1"},
	} {
		out, _ := write(t, exportformat.CSV, []exportformat.Row{{ID: "x", Title: tc.in, Status: "open"}})
		recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if got := recs[1][5]; got != tc.want {
			t.Errorf("title %q -> %q, want %q", tc.in, got, tc.want)
		}
	}
	// Every column is guarded, not only the title.
	row := exportformat.Row{ID: " 1", Project: "\uFF1Dp", Branch: "-b", Tool: "+t", Rule: "@r", Path: `"p`, Urgency: "=u", Status: "open",
		StatusReason: "\tr", Package: "\uFF20pkg", Ecosystem: "\uFF0Be", Version: "\uFF0D1", FixedVersion: "=2", Advisories: []string{"-a"}}
	out, _ := write(t, exportformat.CSV, []exportformat.Row{row})
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range recs[0] {
		if v := recs[1][i]; v != "" && v != "open" && !strings.HasPrefix(v, "'") {
			t.Errorf("column %s: %q unguarded", name, v)
		}
	}
}

// Each line is one finding; the three enrichment states stay apart.
func TestJSONLines(t *testing.T) {
	rows := fixture(t)
	out, n := write(t, exportformat.JSONLines, rows)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if n != len(rows) || len(lines) != len(rows) {
		t.Fatalf("%d lines, %d written, %d rows", len(lines), n, len(rows))
	}
	var got []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		got = append(got, m)
	}
	if v, ok := got[0]["exploit"]; !ok || v != nil {
		t.Errorf("never enriched: exploit %v (present %v), want null", v, ok)
	}
	if x := got[10]["exploit"].(map[string]any); x["kev"] != nil || x["epss"] != nil {
		t.Errorf("enriched, not in KEV: %v", x)
	}
	x := got[3]["exploit"].(map[string]any)
	if k := x["kev"].(map[string]any); k["due_date"] != "2021-12-24" || k["known_ransomware_use"] != true {
		t.Errorf("kev %v", k)
	}
	if e := x["epss"].(map[string]any); e["score"] != 0.94358 || e["date"] != "2026-03-28" {
		t.Errorf("epss %v", e)
	}
	if p := got[3]["package"].(map[string]any); p["name"] != "org.apache.logging.log4j:log4j-core" || p["fixed_version"] != "2.15.0" {
		t.Errorf("package %v", p)
	}
	if got[1]["title"] != `=HYPERLINK("http://evil")` {
		t.Errorf("JSON keeps values as they are: %v", got[1]["title"])
	}
}

// compile loads a schema and the schemas it refers to from testdata, by
// their ids; formats are asserted.
func compile(t *testing.T, main string, files map[string]string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for id, name := range files {
		f, err := os.Open("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile(main)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, doc []byte) {
	t.Helper()
	if err := check(s, doc); err != nil {
		t.Fatalf("invalid: %v", err)
	}
}

func check(s *jsonschema.Schema, doc []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

func sarifSchema(t *testing.T) *jsonschema.Schema {
	return compile(t, "sarif-schema-2.1.0.json", map[string]string{"sarif-schema-2.1.0.json": "sarif-schema-2.1.0.json"})
}

type sarifLog struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID string `json:"id"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID     string         `json:"ruleId"`
			RuleIndex  int            `json:"ruleIndex"`
			Properties map[string]any `json:"properties"`
		} `json:"results"`
	} `json:"runs"`
}

// One run per tool in the order the tools first appear, each with only its
// tool's results and their rules; the log validates against the SARIF
// 2.1.0 schema.
func TestSARIFRunPerTool(t *testing.T) {
	rows := fixture(t)
	var buf bytes.Buffer
	passes := 0
	n, err := exportformat.Write(&buf, exportformat.SARIF, source(rows, &passes), exportformat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema := sarifSchema(t)
	validate(t, schema, buf.Bytes())
	if check(schema, bytes.Replace(buf.Bytes(), []byte(`"level":"error"`), []byte(`"level":"fatal"`), 1)) == nil {
		t.Fatal("schema accepted an unknown level")
	}
	var log sarifLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	var tools []string
	total := 0
	for _, run := range log.Runs {
		tools = append(tools, run.Tool.Driver.Name)
		for _, res := range run.Results {
			total++
			if rule := run.Tool.Driver.Rules[res.RuleIndex].ID; rule != res.RuleID {
				t.Errorf("%s: result of %s points at rule %s", run.Tool.Driver.Name, res.RuleID, rule)
			}
			id := res.Properties["issue_id"].(string)
			r := rows[slices.IndexFunc(rows, func(r exportformat.Row) bool { return r.ID == id })]
			if r.Tool != run.Tool.Driver.Name {
				t.Errorf("finding of %s in the run of %s", r.Tool, run.Tool.Driver.Name)
			}
		}
	}
	if want := []string{"gosec", "semgrep", "osv-scanner"}; !slices.Equal(tools, want) {
		t.Errorf("runs %v, want %v", tools, want)
	}
	if total != len(rows) || n != len(rows) || passes != 3 {
		t.Errorf("%d results, %d written, %d rows, %d passes", total, n, len(rows), passes)
	}
	if rules := len(log.Runs[0].Tool.Driver.Rules); rules != 2 {
		t.Errorf("gosec run has %d rules, want 2", rules)
	}
}

// No findings: a valid log with one empty run.
func TestSARIFEmpty(t *testing.T) {
	out, n := write(t, exportformat.SARIF, nil)
	validate(t, sarifSchema(t), out)
	var log sarifLog
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	if n != 0 || len(log.Runs) != 1 || len(log.Runs[0].Results) != 0 {
		t.Fatalf("%d written, log %+v", n, log)
	}
}

func vexSchema(t *testing.T) *jsonschema.Schema {
	const base = "http://cyclonedx.org/schema/"
	return compile(t, base+"bom-1.6.schema.json", map[string]string{
		base + "bom-1.6.schema.json":  "bom-1.6.schema.json",
		base + "spdx.schema.json":     "spdx.schema.json",
		base + "jsf-0.82.schema.json": "jsf-0.82.schema.json",
	})
}

// The VEX document validates against the CycloneDX 1.6 schema and carries
// each SCA finding's triage as its analysis (the package doc's table).
func TestVEX(t *testing.T) {
	rows := fixture(t)
	out, n := write(t, exportformat.VEX, rows)
	schema := vexSchema(t)
	validate(t, schema, out)
	// The schema does catch a wrong analysis.
	if check(schema, bytes.Replace(out, []byte(`"in_triage"`), []byte(`"triaging"`), 1)) == nil {
		t.Fatal("schema accepted an unknown analysis state")
	}
	var doc struct {
		SerialNumber    string `json:"serialNumber"`
		Vulnerabilities []struct {
			BOMRef     string `json:"bom-ref"`
			ID         string `json:"id"`
			References []struct {
				ID string `json:"id"`
			} `json:"references"`
			Analysis struct {
				State         string   `json:"state"`
				Justification string   `json:"justification"`
				Response      []string `json:"response"`
				Detail        string   `json:"detail"`
				FirstIssued   string   `json:"firstIssued"`
			} `json:"analysis"`
			Affects []struct {
				Ref string `json:"ref"`
			} `json:"affects"`
			Properties []struct{ Name, Value string } `json:"properties"`
		} `json:"vulnerabilities"`
		Components []struct {
			BOMRef string `json:"bom-ref"`
			PURL   string `json:"purl"`
		} `json:"components"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SerialNumber != "urn:uuid:3e671687-395b-41f5-a30f-a58921a69b79" {
		t.Errorf("serial %q", doc.SerialNumber)
	}
	type want struct{ id, state, justification, response, detail string }
	wants := map[string]want{
		"3f8b5e4b-6c7d-8e9f-1a0b-2c3d4e5f6a7b": {"CVE-2021-44228", "in_triage", "", "", ""},
		"4a9c6f5c-7d8e-9f0a-2b1c-3d4e5f6a7b8c": {"CVE-2021-44228", "exploitable", "", "update", "PR #12"},
		"5b0d7a6d-8e9f-0a1b-3c2d-4e5f6a7b8c9d": {"CVE-2021-44228", "exploitable", "", "will_not_fix", "internal tool only"},
		"6c1e8b7e-9f0a-1b2c-4d3e-5f6a7b8c9d0e": {"CVE-2021-44228", "resolved", "", "", ""},
		"7d2f9c8f-0a1b-2c3d-5e4f-6a7b8c9d0e1f": {"CVE-2021-44228", "false_positive", "", "", "shaded copy, not the vulnerable class"},
		"8e3a0d9a-1b2c-3d4e-6f5a-7b8c9d0e1f2a": {"CVE-2021-44228", "not_affected", "", "", "nosemgrep: JNDI lookups disabled"},
		"a05c2f1c-3d4e-5f6a-8b7c-9d0e1f2a3b4c": {"GO-2024-2687", "not_affected", "code_not_reachable", "", "server not exposed"},
		"b16d3a2d-4e5f-6a7b-9c8d-0e1f2a3b4c5d": {"CVE-2023-32681", "in_triage", "", "", ""},
	}
	if n != len(wants) || len(doc.Vulnerabilities) != len(wants) {
		t.Fatalf("%d written, %d vulnerabilities, want %d (SAST and duplicate left out)", n, len(doc.Vulnerabilities), len(wants))
	}
	for _, v := range doc.Vulnerabilities {
		w, ok := wants[v.BOMRef]
		if !ok {
			t.Errorf("unexpected vulnerability %s", v.BOMRef)
			continue
		}
		got := want{v.ID, v.Analysis.State, v.Analysis.Justification, strings.Join(v.Analysis.Response, ","), v.Analysis.Detail}
		if got != w {
			t.Errorf("%s: %+v, want %+v", v.BOMRef, got, w)
		}
		if v.Analysis.FirstIssued != "2025-05-02T09:30:00Z" {
			t.Errorf("%s: firstIssued %q", v.BOMRef, v.Analysis.FirstIssued)
		}
	}
	log4j := doc.Vulnerabilities[0]
	if len(log4j.References) != 1 || log4j.References[0].ID != "GHSA-jfh8-c2jp-5v3q" {
		t.Errorf("references %+v", log4j.References)
	}
	if log4j.Affects[0].Ref != "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1" {
		t.Errorf("affects %+v", log4j.Affects)
	}
	props := map[string]string{}
	for _, p := range log4j.Properties {
		props[p.Name] = p.Value
	}
	if props["codescan:kev:due_date"] != "2021-12-24" || props["codescan:epss:score"] != "0.94358" {
		t.Errorf("properties %v", props)
	}
	var purls []string
	for _, c := range doc.Components {
		if c.BOMRef != c.PURL {
			t.Errorf("component %s named %s", c.PURL, c.BOMRef)
		}
		purls = append(purls, c.PURL)
	}
	if want := []string{"pkg:golang/golang.org/x/net@0.22.0", "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1",
		"pkg:pypi/requests@2.30.0"}; !slices.Equal(purls, want) {
		t.Errorf("components %v, want %v", purls, want)
	}
}

func TestVEXRejectsUnknownStatus(t *testing.T) {
	rows := fixture(t)
	rows[3].Status = "wontfix"
	var buf bytes.Buffer
	passes := 0
	_, err := exportformat.Write(&buf, exportformat.VEX, source(rows, &passes), exportformat.Options{})
	if err == nil || !strings.Contains(err.Error(), `unknown status "wontfix"`) {
		t.Fatalf("err %v", err)
	}
	if _, err := exportformat.Write(&buf, exportformat.VEX, source(rows[:1], &passes), exportformat.Options{Serial: "not-a-uuid"}); err == nil {
		t.Fatal("a serial that is not a uuid was taken")
	}
}

// A source that fails stops the export with its error; so does a writer.
func TestErrorsStopTheExport(t *testing.T) {
	boom := errors.New("query failed")
	fix := fixture(t)
	failing := func(yield func(exportformat.Row) error) error {
		for _, r := range fix[:4] {
			if err := yield(r); err != nil {
				return err
			}
		}
		return boom
	}
	for _, f := range exportformat.Formats {
		if _, err := exportformat.Write(&bytes.Buffer{}, f, failing, exportformat.Options{}); !errors.Is(err, boom) {
			t.Errorf("%s: source error %v", f, err)
		}
		rows := make([]exportformat.Row, 20000)
		for i := range rows {
			rows[i] = fix[3]
		}
		passes := 0
		if _, err := exportformat.Write(failWriter{}, f, source(rows, &passes), exportformat.Options{}); !errors.Is(err, errDisk) {
			t.Errorf("%s: writer error %v", f, err)
		}
	}
	if _, err := exportformat.Write(&bytes.Buffer{}, "xlsx", failing, exportformat.Options{}); err == nil {
		t.Error("unknown format accepted")
	}
}

var errDisk = errors.New("disk full")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errDisk }

// The formats' content types and extensions are what a download names.
func TestFormatNames(t *testing.T) {
	var got []string
	for _, f := range exportformat.Formats {
		got = append(got, string(f)+" "+f.ContentType()+" "+f.Extension())
	}
	want := []string{"csv text/csv; charset=utf-8 .csv", "jsonl application/jsonl .jsonl",
		"sarif application/sarif+json .sarif", "vex application/vnd.cyclonedx+json .cdx.json"}
	if !slices.Equal(got, want) {
		t.Errorf("%q", got)
	}
}
