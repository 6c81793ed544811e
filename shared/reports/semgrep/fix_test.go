package semgrep

import (
	"testing"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/internal/wellformed"
)

// Semgrep's own autofix outputs (testdata/autofix/README.md): `fix`
// replaces the match by line and byte column, `fixed_lines` is what the
// match's lines become; a fix of "" deletes (and without fixed_lines when
// the line is left empty).
func TestFixes(t *testing.T) {
	rep := wellformed.Fixture(t, Parse, "autofix/defaulthttpclient.json")
	f := rep.Findings[0]
	want := reportfinding.Replacement{Path: "targets/autofix/defaulthttpclient.java", Inserted: "HttpClient client = new SystemDefaultHttpClient();",
		Lines:  "\t\tHttpClient client = new SystemDefaultHttpClient();",
		Region: reportfinding.Region{StartLine: 15, StartColumn: 3, EndLine: 15, EndColumn: 47, Unit: reportfinding.UnitBytes}}
	if f.Kind != reportfinding.SAST || f.CWE != 326 || f.Fix == nil || len(f.Fix.Replacements) != 1 || f.Fix.Replacements[0] != want ||
		f.Fix.Explanation != f.Message+"\n Autofix: Semgrep rule suggested fix" {
		t.Fatalf("defaulthttpclient: %+v", f.Fix)
	}
	// Multi-line fixes and fixed lines; columns after a 4-byte character.
	django := wellformed.Fixture(t, Parse, "autofix/django-none-password-default.json").Findings[0].Fix.Replacements[0]
	if django.Region != (reportfinding.Region{StartLine: 60, StartColumn: 9, EndLine: 63, EndColumn: 20, Unit: reportfinding.UnitBytes}) ||
		django.Lines != "        new_password = request.data.get(\"password\", None)\n        validate_password(new_password, user=user)\n        user.set_password(new_password)\n        user.save()" {
		t.Fatalf("django: %+v", django)
	}
	utf8 := wellformed.Fixture(t, Parse, "autofix/utf-8.json").Findings[1].Fix.Replacements[0]
	if utf8.Region.StartColumn != 13 || utf8.Inserted != "print('😊')" || utf8.Lines != "y = '😊'; print('😊'); print('a')" {
		t.Fatalf("utf-8: %+v", utf8)
	}
	deletes := wellformed.Fixture(t, Parse, "autofix/delete-partial-line.json").Findings
	if r := deletes[0].Fix.Replacements[0]; r.Inserted != "" || r.Lines != "foo()" {
		t.Fatalf("a deletion: %+v", r)
	}
	if r := deletes[3].Fix.Replacements[0]; r.Inserted != "" || r.Lines != "" || r.Region.StartLine != 22 {
		t.Fatalf("a deletion leaving an empty line: %+v", r)
	}
	// Results without a fix have none.
	for _, f := range wellformed.Fixture(t, Parse, "correctness.json").Findings {
		if f.Fix != nil {
			t.Fatalf("a fix where the report has none: %+v", f.Fix)
		}
	}
}

// A fix is read only with the positions it replaces, and kept only as
// written.
func TestFixInterpretation(t *testing.T) {
	doc := `{"results":[
	 {"check_id":"a","path":"a.py","start":{"line":1,"col":1},"end":{"line":1,"col":4},"extra":{"message":"m","fix":"x"}},
	 {"check_id":"b","path":"a.py","start":{"line":0},"end":{"line":0},"extra":{"message":"m","fix":"x"}},
	 {"check_id":"c","path":"a.py","start":{"line":3,"col":1},"end":{"line":2,"col":1},"extra":{"message":"m","fix":"x"}},
	 {"check_id":"d","path":"a.py","start":{"line":1,"col":1},"end":{"line":1,"col":2},"extra":{"message":"m","fix":"\u001b[0m"}},
	 {"check_id":"e","path":"a.py","start":{"line":1,"col":1},"end":{"line":1,"col":2},"extra":{"message":"m","fix":null}}]}`
	rep, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if fx := rep.Findings[0].Fix; fx == nil || len(fx.Replacements) != 1 || fx.Replacements[0].Inserted != "x" || fx.Replacements[0].Lines != "" {
		t.Errorf("a plain fix: %+v", fx)
	}
	for _, n := range []int{1, 2, 4} {
		if fx := rep.Findings[n].Fix; fx != nil {
			t.Errorf("%s: %+v", rep.Findings[n].RuleID, fx)
		}
	}
	if fx := rep.Findings[3].Fix; fx == nil || fx.Replacements != nil || fx.Explanation == "" {
		t.Errorf("a fix the text rule would alter: %+v", fx)
	}
}
