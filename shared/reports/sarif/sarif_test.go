package sarif

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

const (
	Critical = reportfinding.Critical
	High     = reportfinding.High
	Medium   = reportfinding.Medium
	Low      = reportfinding.Low
)

// brief is what a test checks of a finding.
type brief struct {
	Kind    reportfinding.Kind
	RuleID  string
	CWE     int
	Path    string
	Line    int
	Urgency string
}

func parseFile(t *testing.T, name string) []reportfinding.Finding {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rep.Findings
}

func TestScanners(t *testing.T) {
	cases := map[string]struct {
		tool string
		want []brief
	}{
		// CWE in rule tags (`CWE-89: ...`); urgency from the rule's default level.
		"semgrep.sarif": {"Semgrep OSS", []brief{
			{reportfinding.SAST, "python.django.security.injection.sql.sql-injection-using-raw.sql-injection-using-raw", 89, "app/views/orders.py", 41, High},
			{reportfinding.SAST, "python.django.security.injection.sql.sql-injection-using-raw.sql-injection-using-raw", 89, "app/views/search.py", 18, High},
			{reportfinding.SAST, "python.django.security.audit.xss.template-href-var.template-href-var", 79, "app/templates/profile.html", 9, Medium},
			{reportfinding.Quality, "python.django.best-practice.debug-enabled", 0, "app/settings.py", 27, Low},
		}},
		// CWE in `external/cwe/cwe-NNN` tags of rules in a query-pack
		// extension; urgency from security-severity (string and number);
		// one location given only as an artifact index.
		"codeql.sarif": {"CodeQL", []brief{
			{reportfinding.SAST, "js/reflected-xss", 79, "src/routes/search.js", 27, High},
			{reportfinding.SAST, "js/sql-injection", 89, "src/db/orders.js", 54, High},
			{reportfinding.SAST, "js/code-injection", 94, "src/routes/admin.js", 103, Critical},
			{reportfinding.SAST, "js/reflected-xss", 79, "src/routes/admin.js", 88, High},
			{reportfinding.SAST, "js/missing-rate-limiting", 770, "src/server.js", 12, Low},
		}},
		// CWE through the CWE taxonomy: rule relationships by taxon id, by
		// taxon guid, by taxonomy and taxon index, and result taxa.
		"gosec.sarif": {"gosec", []brief{
			{reportfinding.SAST, "G101", 798, "internal/config/config.go", 17, High},
			{reportfinding.SAST, "G304", 22, "internal/files/download.go", 42, Medium},
			{reportfinding.SAST, "G401", 328, "internal/auth/token.go", 63, Medium},
			{reportfinding.SAST, "G104", 703, "cmd/server/main.go", 88, Low},
		}},
	}
	for name, c := range cases {
		fs := parseFile(t, name)
		if len(fs) != len(c.want) {
			t.Fatalf("%s: %d findings, want %d: %+v", name, len(fs), len(c.want), fs)
		}
		for i, f := range fs {
			got := brief{f.Kind, f.RuleID, f.CWE, f.Path, f.Line, f.Urgency}
			if got != c.want[i] || f.Tool != c.tool || f.Title == "" {
				t.Errorf("%s[%d] = %+v (tool %q, title %q), want %+v", name, i, got, f.Tool, f.Title, c.want[i])
			}
		}
	}
}

func TestTitle(t *testing.T) {
	fs := parseFile(t, "codeql.sarif")
	if fs[0].Title != "Reflected cross-site scripting" {
		t.Fatalf("title: %q", fs[0].Title)
	}
	// Without a rule, the message is the title (clipped).
	long := strings.Repeat("é", norm.MaxText)
	doc := `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":[{"ruleId":"r","message":{"text":"` + long + `"}}]}]}`
	rep, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	fs = rep.Findings
	if len(fs[0].Title) > norm.MaxText || len(fs[0].Title) < norm.MaxText-1 || !strings.HasPrefix(long, fs[0].Title) {
		t.Fatalf("clipped title: %d bytes", len(fs[0].Title))
	}
}

func TestInterpretation(t *testing.T) {
	const head = `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t","rules":[` +
		`{"id":"R0","properties":{"cwe":["CWE-352"],"security-severity":"4.0"}},` +
		`{"id":"R1","properties":{"cwe":601,"tags":["CWE-79"]},"defaultConfiguration":{"level":"error"}},` +
		`{"id":"R2","messageStrings":{"default":{"text":"from rule"}},"properties":{"tags":["cwe-1000abc","CWE-","2021"]}}` +
		`]}},"originalUriBaseIds":{"SRC":{"uri":"services/api/"},"ROOT":{"uri":"file:///build/repo/"}},"results":[`
	cases := []struct {
		result string
		want   brief
	}{
		// properties.cwe as an array; security-severity 4.0 is ME.
		{`{"ruleId":"R0","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a%20b.go","uriBaseId":"SRC"},"region":{"startLine":3}}}]}`,
			brief{reportfinding.SAST, "R0", 352, "services/api/a b.go", 3, Medium}},
		// properties.cwe as a number wins over tags; the result's level
		// wins over the rule's default; an absolute path under a base is
		// made relative to it.
		{`{"ruleId":"R1","level":"note","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"file:///build/repo/web/x.js"}}}]}`,
			brief{reportfinding.SAST, "R1", 601, "web/x.js", 0, Low}},
		// The result's own properties come before the rule's; its own
		// security-severity before the level.
		{`{"ruleId":"R1","message":{"text":"m"},"properties":{"security-severity":9.1,"tags":["external/cwe/cwe-078"]},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"./x/../y.py"}}}]}`,
			brief{reportfinding.SAST, "R1", 78, "y.py", 0, Critical}},
		// Malformed tags are not CWEs; no level anywhere is SARIF's
		// default warning; the message comes from the rule's strings; the
		// analysis target is the location of last resort.
		{`{"ruleIndex":2,"message":{"id":"default"},"analysisTarget":{"uri":"lib\\util.c"}}`,
			brief{reportfinding.Quality, "R2", 0, "lib/util.c", 0, Medium}},
		// Out-of-range security-severity falls back to the level; a
		// result-level taxon of a taxonomy that is not CWE is ignored.
		{`{"ruleId":"nope","level":"error","message":{"text":"m"},"properties":{"security-severity":"11"},"taxa":[{"id":"A03","toolComponent":{"name":"OWASP"}}]}`,
			brief{reportfinding.Quality, "nope", 0, "", 0, High}},
		// A CWE taxon named only by its component's name.
		{`{"ruleId":"R9","level":"none","message":{"text":"m"},"taxa":[{"id":"CWE-200","toolComponent":{"name":"cwe"}}]}`,
			brief{reportfinding.SAST, "R9", 200, "", 0, Low}},
	}
	for i, c := range cases {
		rep, err := Parse([]byte(head + c.result + `]}]}`))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		f := rep.Findings[0]
		got := brief{f.Kind, f.RuleID, f.CWE, f.Path, f.Line, f.Urgency}
		if got != c.want {
			t.Errorf("case %d = %+v, want %+v", i, got, c.want)
		}
		if i == 3 && f.Title != "from rule" {
			t.Errorf("case 3 title %q", f.Title)
		}
	}
}

func TestKindsAndRuns(t *testing.T) {
	doc := `{"version":"2.1.0","runs":[
		{"tool":{"driver":{"name":"a"}},"results":[
			{"ruleId":"r","kind":"pass","message":{"text":"ok"}},
			{"ruleId":"r","kind":"fail","message":{"text":"bad"}},
			{"ruleId":"r","kind":"notApplicable","message":{"text":"n/a"}},
			{"ruleId":"r","kind":"informational","message":{"text":"fyi"}},
			{"ruleId":"r","kind":"review","message":{"text":"look"}}]},
		{"tool":{"driver":{"name":"b"}},"results":[],"versionControlProvenance":[{"repositoryUri":"https://github.com/acme/a"}]},
		{"tool":{"driver":{"name":"c"}},"results":[{"ruleId":"r","message":{"text":"x"}}],
		 "versionControlProvenance":[{"repositoryUri":"https://github.com/acme/c","branch":"refs/heads/release/1.2","revisionId":"0123abc"}]}]}`
	rep, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	// The first run that names a repository, a branch or a commit gives it.
	if rep.RepositoryURI != "https://github.com/acme/a" || rep.Branch != "release/1.2" || rep.CommitSHA != "0123abc" {
		t.Fatalf("provenance: %q %q %q", rep.RepositoryURI, rep.Branch, rep.CommitSHA)
	}
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Tool+":"+f.Title)
	}
	if strings.Join(got, ",") != "a:bad,a:look,c:x" {
		t.Fatalf("got %v", got)
	}
	// Every run's tool, also one that found nothing.
	if strings.Join(rep.Tools, ",") != "a,b,c" {
		t.Fatalf("tools %v", rep.Tools)
	}
}

func TestInvalid(t *testing.T) {
	cases := map[string]string{
		"":                                  "the body is empty",
		"  \n":                              "the body is empty",
		"\xff\xfe{}":                        "not UTF-8",
		"<html></html>":                     "not valid JSON",
		`{"version":"2.1.0","runs":[`:       "not valid JSON",
		`[1,2]`:                             "top level must be a JSON object",
		`null`:                              "top level must be a JSON object",
		`{"runs":[]}`:                       `missing "version"`,
		`{"version":2.1,"runs":[]}`:         `"version" must be a string`,
		`{"version":"2.0.0","runs":[]}`:     `unsupported version "2.0.0"`,
		`{"version":"2.1.0"}`:               `missing "runs"`,
		`{"version":"2.1.0","runs":{}}`:     `"runs" must be an array`,
		`{"version":"2.1.0","runs":[{}]}`:   "runs[0].tool.driver.name is missing",
		`{"version":"2.1.0","runs":[null]}`: "runs[0].tool.driver.name is missing",
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":"x"}]}`:              `"runs.results" has the wrong type`,
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":[{}]}]}`:             "runs[0].results[0].message is missing",
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":[{"message":{}}]}]}`: "runs[0].results[0].message is missing",
	}
	for in, want := range cases {
		_, err := Parse([]byte(in))
		var se *reporterr.Invalid
		if !errors.As(err, &se) || !strings.Contains(se.Problem, want) {
			t.Errorf("Parse(%q) = %v, want an Invalid error containing %q", in, err, want)
		}
	}
}

// What a hostile or careless producer writes (docs/ingestion.md): paths outside
// the repository are dropped and counted, so are results without a rule;
// a negative line drops the region; an unknown level is `warning`.
func TestHostilePaths(t *testing.T) {
	doc := `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t","rules":[{"id":"R"}]}},
	 "originalUriBaseIds":{"SRCROOT":{"uri":"file:///home/runner/work/app/app/"},"REL":{"uri":"pkg/"}},
	 "results":[
	  {"ruleId":"R","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"../../../etc/passwd"}}}]},
	  {"ruleId":"R","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"file:///etc/passwd"}}}]},
	  {"ruleId":"R","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"C:\\build\\x.cs"}}}]},
	  {"ruleId":"R","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/%2e%2e/%2e%2e/x"}}}]},
	  {"ruleId":"R","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"https://example.com/x.js"}}}]},
	  {"ruleId":"R","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"` + strings.Repeat("d/", 400) + `x"}}}]},
	  {"ruleId":null,"message":{"text":"m"}},
	  {"message":{"text":"m"},"rule":{"index":7}},
	  {"ruleId":"R","level":"fatal","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"file:///home/runner/work/app/app/cmd/main.go"},"region":{"startLine":-3,"endLine":-1,"snippet":{"text":"x"}}}}]},
	  {"message":{"text":"m"},"rule":{"index":0},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a.go","uriBaseId":"REL"},"region":{"startLine":4,"endLine":2,"snippet":{"text":"code()"}}}}],
	   "partialFingerprints":{"z":"1","primaryLocationLineHash":"abc:1"},"fingerprints":{"b":"2","a":"3"}},
	  {"ruleId":"R","message":{"text":"m"},"fingerprints":{"b":"2","a":""},"partialFingerprints":{"c":"4"}}]}]}`
	rep, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{norm.Outside: 2, norm.Absolute: 3, MissingRuleID: 2, norm.TooLong: 1}
	if len(rep.Dropped) != len(want) {
		t.Fatalf("dropped %v", rep.Dropped)
	}
	for k, v := range want {
		if rep.Dropped[k] != v {
			t.Fatalf("dropped %v, want %v", rep.Dropped, want)
		}
	}
	if len(rep.Findings) != 3 {
		t.Fatalf("findings %+v", rep.Findings)
	}
	f := rep.Findings[0]
	if f.Path != "cmd/main.go" || f.Line != 0 || f.EndLine != 0 || f.Snippet != "" || f.Urgency != Medium {
		t.Errorf("absolute under a base, negative line, unknown level: %+v", f)
	}
	f = rep.Findings[1]
	if f.RuleID != "R" || f.Path != "pkg/a.go" || f.Line != 4 || f.EndLine != 4 || f.Snippet != "code()" || f.Fingerprint != "primaryLocationLineHash:abc:1" {
		t.Errorf("rule by index, relative base, fingerprint: %+v", f)
	}
	// fingerprints before partialFingerprints, empty values ignored.
	if f := rep.Findings[2]; f.Fingerprint != "b:2" {
		t.Errorf("fingerprint %q", f.Fingerprint)
	}
}

// Real linters and scanners: staticcheck's results are quality findings
// classified by check group; gosec's are SAST findings with CWEs.
func TestRealTools(t *testing.T) {
	type q struct {
		Kind           reportfinding.Kind
		RuleID, Path   string
		Line, EndLine  int
		CWE            int
		Urgency, Class string
	}
	cases := map[string][]q{
		"staticcheck.sarif": {
			{reportfinding.Quality, "S1003", "main.go", 21, 21, 0, Medium, norm.Maintainability},
			{reportfinding.Quality, "U1000", "store/store.go", 9, 9, 0, Medium, norm.Maintainability},
			{reportfinding.Quality, "SA4000", "store/store.go", 19, 19, 0, Medium, norm.Correctness},
		},
		"gosec-real.sarif": {
			{reportfinding.SAST, "G703", "main.go", 20, 20, 22, High, ""},
			{reportfinding.SAST, "G401", "main.go", 18, 18, 328, High, ""},
			{reportfinding.SAST, "G114", "main.go", 27, 27, 676, High, ""},
			{reportfinding.SAST, "G201", "store/store.go", 13, 13, 89, High, ""},
			{reportfinding.SAST, "G501", "main.go", 6, 6, 327, High, ""},
			{reportfinding.SAST, "G104", "store/store.go", 17, 17, 703, Medium, ""},
			{reportfinding.SAST, "G104", "main.go", 27, 27, 703, Medium, ""},
		},
	}
	for name, want := range cases {
		fs := parseFile(t, name)
		if len(fs) != len(want) {
			t.Fatalf("%s: %d findings: %+v", name, len(fs), fs)
		}
		for i, f := range fs {
			got := q{f.Kind, f.RuleID, f.Path, f.Line, f.EndLine, f.CWE, f.Urgency, f.Classification}
			if got != want[i] || f.Snippet == "" && f.Kind == reportfinding.SAST || f.Title == "" || f.Message == "" {
				t.Errorf("%s[%d] = %+v (snippet %q), want %+v", name, i, got, f.Snippet, want[i])
			}
		}
	}
}
