package reports

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/cyclonedx"
	"github.com/acme/codescan-api/shared/reports/govulncheck"
	"github.com/acme/codescan-api/shared/reports/internal/wellformed"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/reports/osv"
	"github.com/acme/codescan-api/shared/reports/sarif"
	"github.com/acme/codescan-api/shared/reports/semgrep"
)

// rawControl is the first character of s that no output may show raw: a
// C0 control (newline and tab allowed where lines are), DEL, a C1 control,
// a bidi embedding, override or isolate. Written apart from cleantext, so
// the rule is checked by a second reading of it.
func rawControl(s string, multiline bool) (rune, bool) {
	for _, r := range s {
		switch {
		case multiline && (r == '\n' || r == '\t'):
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return r, true
		}
	}
	return 0, false
}

// checkClean fails t for a report that breaks a parser's promises or holds
// a raw control character in any text.
func checkClean(t *testing.T, name string, rep reportfinding.Report) {
	t.Helper()
	if err := wellformed.Check(rep); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := wellformed.Visible(rep); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	rep.MapText(func(s string, k reportfinding.TextKind) string {
		if r, bad := rawControl(s, k == reportfinding.TextProse); bad {
			t.Errorf("%s: U+%04X raw in %q", name, r, s)
		}
		return s
	})
}

// Every text a report of any format brings comes out of Parse written out
// by the edge's rule: messages, rule ids, tool names, paths (raw or
// percent-encoded), snippets, fingerprints, justifications, branches,
// package names, versions, advisory ids and text, call paths.
func TestParseCleansEveryText(t *testing.T) {
	cases := []struct {
		engine, file string
		want         func(reportfinding.Report) map[string]string
	}{
		{"sarif", "hostile.sarif", func(rep reportfinding.Report) map[string]string {
			a, b := rep.Findings[0], rep.Findings[1]
			return map[string]string{
				"tool":          rep.Tools[0],
				"branch":        rep.Branch,
				"rule":          a.RuleID,
				"title":         a.Title,
				"message":       a.Message,
				"path":          a.Path,
				"snippet":       a.Snippet,
				"fingerprint":   a.Fingerprint,
				"encoded path":  b.Path,
				"justification": b.Suppression.Justification,
			}
		}},
		{"semgrep", "hostile-semgrep.json", func(rep reportfinding.Report) map[string]string {
			f := rep.Findings[0]
			return map[string]string{"rule": f.RuleID, "path": f.Path, "message": f.Message, "snippet": f.Snippet, "fingerprint": f.Fingerprint}
		}},
		{"osv-scanner", "hostile-osv.json", func(rep reportfinding.Report) map[string]string {
			d := rep.Findings[0].SCA
			return map[string]string{"package": d.Name, "version": d.Version, "ids": strings.Join(d.IDs, " "), "cve": d.CVE,
				"fix": d.FixVersion, "summary": d.Summary, "details": d.Details, "manifest": d.Manifest, "rule": rep.Findings[0].RuleID}
		}},
		{"cyclonedx", "hostile.cdx.json", func(rep reportfinding.Report) map[string]string {
			d := rep.Findings[0].SCA
			return map[string]string{"tool": rep.Tools[0], "package": d.Name, "version": d.Version, "ids": strings.Join(d.IDs, " "),
				"summary": d.Summary, "details": d.Details, "fix": d.FixVersion}
		}},
		{"govulncheck", "hostile-govulncheck.json", func(rep reportfinding.Report) map[string]string {
			d := rep.Findings[0].SCA
			u := d.Reachability.Usages[0]
			return map[string]string{"package": d.Name, "version": d.Version, "ids": strings.Join(d.IDs, " "), "fix": d.FixVersion,
				"summary": d.Summary, "details": d.Details, "usage file": u.File, "usage function": u.Function, "call path": u.Path}
		}},
	}
	want := map[string]map[string]string{
		"hostile.sarif": {
			"tool":          "Evil<U+0000>Scan<U+001B>[31m<U+0007><U+202E>",
			"branch":        "main<U+001B>[2J",
			"rule":          "rule<U+0000><U+001B>[31m<U+0085><U+202E>id",
			"title":         "Title <U+001B>]8;;https://evil.example<U+0007>click<U+001B>]8;;<U+0007> @alice <U+2066>iso<U+2069>",
			"message":       "Message<U+0000> with <U+001B>[31mred<U+001B>[0m, bell<U+0007>, C1 <U+0085> and <U+009B>, DEL <U+007F>, RLO <U+202E>desrever<U+202C>, isolate <U+2066>x<U+2069>,\nCRLF and a\ttab; @alice",
			"path":          "src/evil<U+001B>[31m<U+202E><U+2066>.go",
			"snippet":       "x := \"<U+001B>[31m<U+202E>\" // <U+0000>\n",
			"fingerprint":   "primaryLocationLineHash:fp<U+0000><U+001B><U+202E>",
			"encoded path":  "lib/<U+001B><U+202E>\uFFFDpct.py",
			"justification": "because<U+0000> <U+001B>[31m<U+0007><U+0085><U+009B><U+007F><U+202E><U+2066> @bob",
		},
		"hostile-semgrep.json": {
			"rule":        "rules.evil<U+0000><U+001B>[31m<U+202E>",
			"path":        "web/app<U+001B>[31m<U+2066>.py",
			"message":     "Semgrep<U+0000> message <U+001B>[31mred <U+0007><U+0085><U+009B><U+007F><U+202E><U+2066> @erin",
			"snippet":     "eval(x) <U+001B>[31m\n",
			"fingerprint": "fp<U+001B><U+202E>",
		},
		"hostile-osv.json": {
			"package":  "example.com/evil<U+0000><U+001B>[31m<U+202E>mod",
			"version":  "1.0.0<U+0007>",
			"ids":      "GO-2099-0001<U+001B> CVE-2099-0001<U+202E> GHSA-xxxx<U+0085>-xxxx-xxxx",
			"cve":      "CVE-2099-0001<U+202E>",
			"fix":      "1.0.1<U+001B>",
			"summary":  "Summary<U+0000> <U+001B>[31mred<U+001B>[0m <U+0085><U+009B><U+007F> <U+202E>evil<U+2066> @carol",
			"details":  "Details<U+0007> line one\nline two <U+202E>",
			"manifest": "deps/go<U+001B>[31m<U+202E>.mod",
			"rule":     "GO-2099-0001<U+001B>",
		},
		"hostile.cdx.json": {
			"tool":    "evil<U+001B>[31mtool<U+202E>",
			"package": "evil<U+0000>lib<U+202E>",
			"version": "2.0<U+0007>",
			"ids":     "CVE-2099-0002<U+001B>",
			"summary": "Description<U+0000> <U+001B>[31m<U+0085><U+009B><U+007F><U+202E><U+2066> @dave",
			"details": "Detail<U+0007>\nmore",
			"fix":     "2.1<U+001B>",
		},
		"hostile-govulncheck.json": {
			"package":        "example.com/vuln<U+202E>",
			"version":        "v1.2.3<U+0007>",
			"ids":            "GO-2099-0003 CVE-2099-0003<U+001B>",
			"fix":            "v1.2.4<U+001B>",
			"summary":        "Sum<U+0000>mary <U+202E>",
			"details":        "De<U+0007>tails\n<U+2066>",
			"usage file":     "cmd/main<U+001B>.go",
			"usage function": "example.com/app.main<U+0085>",
			"call path":      "example.com/app.main<U+0085> -> example.com/vuln<U+202E>/pkg.Bad<U+001B>[31m",
		},
	}
	for _, c := range cases {
		rep, err := Parse(c.engine, fixture(t, "testdata", c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if len(rep.Findings) == 0 {
			t.Fatalf("%s: no findings", c.file)
		}
		checkClean(t, c.file, rep)
		got := c.want(rep)
		for field, w := range want[c.file] {
			if got[field] != w {
				t.Errorf("%s %s:\n got %q\nwant %q", c.file, field, got[field], w)
			}
		}
	}
}

// A report without such characters comes out of Parse exactly as its
// format's parser reads it: the rule changes nothing of what real
// scanners write, so no finding of theirs changes identity.
func TestParseLeavesCleanReportsAlone(t *testing.T) {
	cases := []struct {
		engine string
		file   []string
		parse  func([]byte) (reportfinding.Report, error)
	}{
		{"sarif", []string{"sarif", "testdata", "codeql.sarif"}, sarif.Parse},
		{"sarif", []string{"sarif", "testdata", "gosec-real.sarif"}, sarif.Parse},
		{"sarif", []string{"sarif", "testdata", "staticcheck.sarif"}, sarif.Parse},
		{"sarif", []string{"sarif", "testdata", "semgrep-nosemgrep.sarif"}, sarif.Parse},
		{"semgrep", []string{"semgrep", "testdata", "django-password.json"}, semgrep.Parse},
		{"semgrep", []string{"semgrep", "testdata", "correctness.json"}, semgrep.Parse},
		{"govulncheck", []string{"govulncheck", "testdata", "calls.json"}, govulncheck.Parse},
		{"osv-scanner", []string{"osv", "testdata", "go-and-cargo.json"}, osv.Parse},
		{"cyclonedx", []string{"cyclonedx", "testdata", "trivy-pom.cdx.json"}, cyclonedx.Parse},
		{"cyclonedx", []string{"cyclonedx", "testdata", "grype-dir.cdx.json"}, cyclonedx.Parse},
	}
	for _, c := range cases {
		data := fixture(t, c.file...)
		own, err := c.parse(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(c.engine, data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(own, got) {
			t.Errorf("%s: Parse changed a clean report", c.file[len(c.file)-1])
		}
	}
}

// Writing characters out never takes a text past its parser's bound: a
// rule id of MaxID escapes and a message of MaxText NULs are cut back.
func TestParseKeepsBounds(t *testing.T) {
	id := strings.Repeat(`\u001b`, norm.MaxID)
	msg := strings.Repeat(`\u0000`, norm.MaxText)
	doc := fmt.Sprintf(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":[{"ruleId":"%s","message":{"text":"%s"}}]}]}`, id, msg)
	rep, err := Parse("sarif", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Findings[0]
	if len(f.RuleID) > norm.MaxID || len(f.Message) > norm.MaxText || !strings.HasPrefix(f.RuleID, "<U+001B><U+001B>") {
		t.Fatalf("rule id %d bytes, message %d bytes", len(f.RuleID), len(f.Message))
	}
	checkClean(t, "bounds", rep)
}

// engines are the formats the fuzz target feeds, by index.
var engines = []string{SARIF, Semgrep, Govulncheck, OSVScanner, CycloneDX}

// FuzzParse: any input to any engine gives a typed error, or a report that
// keeps every parser's promises with every text following the rule.
func FuzzParse(f *testing.F) {
	seeds := map[string][]string{
		SARIF:       {"testdata/hostile.sarif", "sarif/testdata/gosec.sarif"},
		Semgrep:     {"testdata/hostile-semgrep.json", "semgrep/testdata/nosem.json"},
		Govulncheck: {"testdata/hostile-govulncheck.json", "govulncheck/testdata/requires.json"},
		OSVScanner:  {"testdata/hostile-osv.json"},
		CycloneDX:   {"testdata/hostile.cdx.json"},
	}
	for i, e := range engines {
		for _, file := range seeds[e] {
			f.Add(uint8(i), fixture(f, file))
		}
	}
	f.Fuzz(func(t *testing.T, engine uint8, data []byte) {
		rep, err := Parse(engines[int(engine)%len(engines)], data)
		if err != nil {
			var invalid *InvalidError
			var big *TooLargeError
			if !errors.As(err, &invalid) && !errors.As(err, &big) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		checkClean(t, "fuzz", rep)
	})
}
