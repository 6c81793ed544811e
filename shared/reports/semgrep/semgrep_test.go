package semgrep

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/internal/wellformed"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

type brief struct {
	Kind           reportfinding.Kind
	RuleID         string
	CWE            int
	Path           string
	Line, EndLine  int
	Urgency        string
	Classification string
}

func TestFixtures(t *testing.T) {
	cases := map[string][]brief{
		// Correctness rules of the registry: quality findings.
		"correctness.json": {
			{reportfinding.Quality, "javascript.lang.correctness.useless-eqeq.eqeq-is-bad", 0, "targets/basic/stupid.js", 3, 3, reportfinding.High, norm.Correctness},
			{reportfinding.Quality, "python.lang.correctness.useless-eqeq.useless-eqeq", 0, "targets/basic/stupid.py", 3, 3, reportfinding.Low, norm.Correctness},
		},
		// category security with a CWE string.
		"deduplication.json": {
			{reportfinding.SAST, "rules.duplicate-eq", 522, "targets/basic/stupid.py", 3, 3, reportfinding.Medium, ""},
			{reportfinding.SAST, "rules.duplicate-eq", 522, "targets/basic/stupid.py", 8, 8, reportfinding.Medium, ""},
			{reportfinding.SAST, "rules.duplicate-eq", 522, "targets/basic/stupid.py", 12, 12, reportfinding.Medium, ""},
		},
		// A CWE without a category is enough; multi-line matches.
		"django-password.json": {
			{reportfinding.SAST, "rules.autofix.python.django.security.passwords.use-none-for-password-default.use-none-for-password-default", 521, "targets/autofix/django-none-password-default.py", 60, 63, reportfinding.High, ""},
			{reportfinding.SAST, "rules.autofix.python.django.security.passwords.use-none-for-password-default.use-none-for-password-default", 521, "targets/autofix/django-none-password-default.py", 71, 81, reportfinding.High, ""},
		},
	}
	for name, want := range cases {
		rep := wellformed.Fixture(t, Parse, name)
		if len(rep.Findings) != len(want) {
			t.Fatalf("%s: %d findings, want %d: %+v", name, len(rep.Findings), len(want), rep.Findings)
		}
		for i, f := range rep.Findings {
			got := brief{f.Kind, f.RuleID, f.CWE, f.Path, f.Line, f.EndLine, f.Urgency, f.Classification}
			if got != want[i] || f.Tool != Tool || f.Title == "" || f.Message == "" || f.Snippet == "" {
				t.Errorf("%s[%d] = %+v (title %q), want %+v", name, i, got, f.Title, want[i])
			}
		}
	}
	f := wellformed.Fixture(t, Parse, "correctness.json").Findings[0]
	if !strings.HasPrefix(f.Fingerprint, "26682c31d5fdf771") || f.Snippet != "console.log(x == x)" ||
		f.Title != "Detected a useless comparison operation `x == x` or `x != x`. This operation is always true. If testing for floating point NaN, use `math.isnan`, or `cmath.isnan` if the number is complex." {
		t.Fatalf("first finding: %+v", f)
	}
}

func TestInterpretation(t *testing.T) {
	doc := `{"version":"1.90.0","errors":[],"results":[
	 {"check_id":"a","path":"./src/../src/a.py","start":{"line":0,"col":1},"end":{"line":0,"col":2},
	  "extra":{"message":"m","severity":"WARNING","fingerprint":"requires login","metadata":{"cwe":["not one","CWE-79: XSS"],"category":"performance"}}},
	 {"check_id":"b","path":"b.go","start":{"line":5},"end":{"line":2},
	  "extra":{"message":"line one\nline two","severity":"weird","metadata":{"category":["odd"],"cwe":42}}},
	 {"check_id":"","path":"c.go","extra":{"message":"m"}},
	 {"check_id":"d","path":"/etc/passwd","extra":{"message":"m"}},
	 {"check_id":"e","path":"a/../../x","extra":{"message":"m"}},
	 {"check_id":"f","path":"src\\win.cs","extra":{"message":"m","severity":"CRITICAL","metadata":{"category":"best-practice"}}}]}`
	rep, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := wellformed.Check(rep); err != nil {
		t.Fatal(err)
	}
	want := []brief{
		// A CWE in a list makes it SAST whatever the category; line 0
		// drops the region; the login placeholder is no fingerprint.
		{reportfinding.SAST, "a", 79, "src/a.py", 0, 0, reportfinding.Medium, ""},
		// An end before the start is the start; unknown severity medium;
		// a category that is no string is no class.
		{reportfinding.Quality, "b", 0, "b.go", 5, 5, reportfinding.Medium, norm.Maintainability},
		{reportfinding.Quality, "f", 0, "src/win.cs", 0, 0, reportfinding.Critical, norm.Maintainability},
	}
	if len(rep.Findings) != len(want) {
		t.Fatalf("%+v", rep.Findings)
	}
	for i, f := range rep.Findings {
		if got := (brief{f.Kind, f.RuleID, f.CWE, f.Path, f.Line, f.EndLine, f.Urgency, f.Classification}); got != want[i] {
			t.Errorf("[%d] = %+v, want %+v", i, got, want[i])
		}
	}
	if rep.Findings[0].Fingerprint != "" || rep.Findings[1].Title != "line one" {
		t.Errorf("fingerprint %q, title %q", rep.Findings[0].Fingerprint, rep.Findings[1].Title)
	}
	wantDropped := map[string]int{MissingRuleID: 1, norm.Absolute: 1, norm.Outside: 1}
	if len(rep.Dropped) != len(wantDropped) {
		t.Fatalf("dropped %v", rep.Dropped)
	}
	for k, v := range wantDropped {
		if rep.Dropped[k] != v {
			t.Fatalf("dropped %v", rep.Dropped)
		}
	}
}

func TestInvalid(t *testing.T) {
	cases := map[string]string{
		"":                         "the body is empty",
		"\xff":                     "not UTF-8",
		"{":                        "not valid JSON",
		"[]":                       "top level must be a JSON object",
		`{"errors":[]}`:            `missing "results"`,
		`{"results":{}}`:           `"results" has the wrong type`,
		`{"results":[{"path":1}]}`: `"results.path" has the wrong type`,
	}
	for in, want := range cases {
		_, err := Parse([]byte(in))
		var inv *reporterr.Invalid
		if !errors.As(err, &inv) || !strings.Contains(inv.Problem, want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
	many := `{"results":[` + strings.Repeat(`{},`, norm.MaxFindings) + `{}]}`
	var big *reporterr.TooLarge
	if _, err := Parse([]byte(many)); !errors.As(err, &big) || big.Limit != norm.MaxFindings {
		t.Fatalf("too many: %v", err)
	}
}

// Semgrep's --disable-nosem output marks the results a nosemgrep comment
// covers is_ignored (testdata/nosem.json: nosem.go line 4 and every
// commented line of nosem.py); the others stay unsuppressed.
func TestIgnored(t *testing.T) {
	rep := wellformed.Fixture(t, Parse, "nosem.json")
	want := map[string]bool{"targets/basic/nosem.go:4": true, "targets/basic/nosem.go:5": false, "targets/basic/nosem.py:22": false}
	for _, l := range []int{2, 5, 8, 11, 14, 16, 17, 18, 19, 20} {
		want[fmt.Sprintf("targets/basic/nosem.py:%d", l)] = true
	}
	if len(rep.Findings) != len(want) {
		t.Fatalf("%d findings, want %d", len(rep.Findings), len(want))
	}
	for _, f := range rep.Findings {
		key := fmt.Sprintf("%s:%d", f.Path, f.Line)
		suppressed, ok := want[key]
		if !ok || (f.Suppression != nil) != suppressed {
			t.Errorf("%s: suppression %+v, want suppressed=%v", key, f.Suppression, suppressed)
		}
		if f.Suppression != nil && (f.Suppression.Kind != reportfinding.InSource || f.Suppression.Justification != "") {
			t.Errorf("%s: suppression %+v", key, f.Suppression)
		}
	}
	for _, name := range []string{"correctness.json", "deduplication.json", "django-password.json"} {
		for i, f := range wellformed.Fixture(t, Parse, name).Findings {
			if f.Suppression != nil {
				t.Errorf("%s[%d] suppressed: %+v", name, i, f.Suppression)
			}
		}
	}
}
