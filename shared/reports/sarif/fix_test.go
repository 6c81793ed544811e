package sarif

import (
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/reportfinding"
)

// Real outputs' fixes (testdata/README.md): staticcheck's replacement by
// byte columns, Semgrep's fixed lines in place of its match, gosec's
// suggestion with a change that names no file (kept as its explanation).
func TestFixesOfRealTools(t *testing.T) {
	var s1003 *reportfinding.Fix
	for _, f := range parseFile(t, "staticcheck.sarif") {
		if f.RuleID == "S1003" {
			s1003 = f.Fix
		} else if f.Fix != nil {
			t.Errorf("%s has a fix: %+v", f.RuleID, f.Fix)
		}
	}
	want := reportfinding.Replacement{Path: "main.go", Inserted: `strings.Contains(string(data), "x")`,
		Region: reportfinding.Region{StartLine: 21, StartColumn: 5, EndLine: 21, EndColumn: 43, Unit: reportfinding.UnitBytes}}
	if s1003 == nil || s1003.Explanation != "Simplify use of strings.Index" || len(s1003.Replacements) != 1 || s1003.Replacements[0] != want {
		t.Fatalf("staticcheck's S1003 fix: %+v", s1003)
	}

	semgrep := parseFile(t, "semgrep-autofix.sarif")
	if len(semgrep) != 2 {
		t.Fatalf("semgrep: %+v", semgrep)
	}
	want = reportfinding.Replacement{Path: "targets/autofix/autofix.py", Inserted: "  inputs.get(x) = 1",
		Region: reportfinding.Region{StartLine: 5, StartColumn: 3, EndLine: 5, EndColumn: 12, Unit: reportfinding.UnitBytes, MaybeWholeLines: true}}
	if fx := semgrep[0].Fix; fx == nil || len(fx.Replacements) != 1 || fx.Replacements[0] != want ||
		fx.Explanation != "Use `.get()` method to avoid a KeyNotFound error\n Autofix: Semgrep rule suggested fix" {
		t.Fatalf("semgrep's fix: %+v", fx)
	}

	gosec := parseFile(t, "gosec-fix.sarif")
	if len(gosec) != 1 || gosec[0].Kind != reportfinding.SAST || gosec[0].CWE != 22 {
		t.Fatalf("gosec: %+v", gosec)
	}
	if fx := gosec[0].Fix; fx == nil || fx.Replacements != nil ||
		!strings.HasPrefix(fx.Explanation, "Consider using os.Root to scope file access under a fixed root") {
		t.Fatalf("gosec's fix: %+v", fx)
	}
	for _, f := range parseFile(t, "codeql.sarif") {
		if f.Fix != nil {
			t.Fatalf("a fix where the report has none: %+v", f)
		}
	}
}

// fixOf parses a one-result report whose result has the given fixes (and
// the run the given members).
func fixOf(t *testing.T, fixes, run string) *reportfinding.Fix {
	t.Helper()
	doc := `{"version":"2.1.0","runs":[{` + run + `"tool":{"driver":{"name":"t"}},"results":[{"ruleId":"r","message":{"text":"m"},
		"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/a.go"},"region":{"startLine":1}}}],"fixes":` + fixes + `}]}]}`
	rep, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return rep.Findings[0].Fix
}

// How regions, contents and paths of a fix are read, and which fixes keep
// only their explanation.
func TestFixInterpretation(t *testing.T) {
	change := func(uri, replacements string) string {
		return `[{"description":{"text":"why"},"artifactChanges":[{"artifactLocation":{"uri":"` + uri + `"},"replacements":[` + replacements + `]}]}]`
	}
	cases := map[string]struct {
		fixes, run string
		want       []reportfinding.Replacement
	}{
		"lines, columns of utf-16 as the run says, the deleted snippet": {
			change("./src//a.go", `{"deletedRegion":{"startLine":2,"startColumn":3,"endLine":4,"snippet":{"text":"old"}},"insertedContent":{"text":"new"}}`),
			`"columnKind":"utf16CodeUnits",`,
			[]reportfinding.Replacement{{Path: "src/a.go", Inserted: "new", Deleted: "old",
				Region: reportfinding.Region{StartLine: 2, StartColumn: 3, EndLine: 4, Unit: reportfinding.UnitUTF16}}}},
		"character offsets, a pure deletion, code points": {
			change("src/a.go", `{"deletedRegion":{"charOffset":10,"charLength":4}}`), `"columnKind":"unicodeCodePoints",`,
			[]reportfinding.Replacement{{Path: "src/a.go", Region: reportfinding.Region{Offset: 10, Length: 4, Unit: reportfinding.UnitCodePoints}}}},
		"byte offsets, an insertion, no column kind": {
			change("src/a.go", `{"deletedRegion":{"byteOffset":0,"byteLength":0},"insertedContent":{"text":"// x\n"}}`), "",
			[]reportfinding.Replacement{{Path: "src/a.go", Inserted: "// x\n", Region: reportfinding.Region{Unit: reportfinding.UnitBytes}}}},
		"a relative base": {
			`[{"artifactChanges":[{"artifactLocation":{"uri":"a.go","uriBaseId":"SRC"},"replacements":[{"deletedRegion":{"startLine":1},"insertedContent":{"text":"x"}}]}]}]`,
			`"originalUriBaseIds":{"SRC":{"uri":"src/"}},`,
			[]reportfinding.Replacement{{Path: "src/a.go", Inserted: "x", Region: reportfinding.Region{StartLine: 1}}}},
	}
	for name, c := range cases {
		fx := fixOf(t, c.fixes, c.run)
		if fx == nil || len(fx.Replacements) != len(c.want) {
			t.Errorf("%s: %+v", name, fx)
			continue
		}
		for i := range c.want {
			if fx.Replacements[i] != c.want[i] {
				t.Errorf("%s: %+v, want %+v", name, fx.Replacements[i], c.want[i])
			}
		}
	}
	// Fixes that cannot be read whole keep their explanation only.
	for name, fixes := range map[string]string{
		"no uri":           `[{"description":{"text":"why"},"artifactChanges":[{"artifactLocation":{"index":0},"replacements":[{"deletedRegion":{"startLine":1}}]}]}]`,
		"an absolute path": change("/etc/passwd", `{"deletedRegion":{"startLine":1}}`),
		"an escaping path": change("../x.go", `{"deletedRegion":{"startLine":1}}`),
		"no region kind":   change("src/a.go", `{"deletedRegion":{"charOffset":3}}`),
		"a line below 1":   change("src/a.go", `{"deletedRegion":{"startLine":0}}`),
		"negative length":  change("src/a.go", `{"deletedRegion":{"byteOffset":1,"byteLength":-2}}`),
		"binary content":   change("src/a.go", `{"deletedRegion":{"startLine":1},"insertedContent":{"binary":"AAE="}}`),
		"a control char":   change("src/a.go", `{"deletedRegion":{"startLine":1},"insertedContent":{"text":"\u001b[31m"}}`),
		"too many":         change("src/a.go", strings.Repeat(`{"deletedRegion":{"startLine":1}},`, reportfinding.MaxFixReplacements)+`{"deletedRegion":{"startLine":1}}`),
	} {
		if fx := fixOf(t, fixes, ""); fx == nil || fx.Explanation != "why" || fx.Replacements != nil {
			t.Errorf("%s: %+v", name, fx)
		}
	}
	// The first fix that can be read wins; a fix of nothing is none.
	two := `[{"description":{"text":"first"}},` + change("src/a.go", `{"deletedRegion":{"startLine":1},"insertedContent":{"text":"y"}}`)[1:]
	if fx := fixOf(t, two, ""); fx == nil || fx.Explanation != "why" || len(fx.Replacements) != 1 {
		t.Errorf("two fixes: %+v", fx)
	}
	if fx := fixOf(t, `[{"artifactChanges":[]}]`, ""); fx != nil {
		t.Errorf("an empty fix: %+v", fx)
	}
}
