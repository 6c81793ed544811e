package triagemodel

import (
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/reportfinding"
)

func TestOfFinding(t *testing.T) {
	sast := reportfinding.Finding{Kind: reportfinding.SAST, Tool: "gosec", RuleID: "G401", CWE: 328, Path: "cmd/main.go", Urgency: reportfinding.High}
	if s := OfFinding(7, sast); s != (Subject{ProjectID: 7, Tool: "gosec", RuleID: "G401", CWE: 328, Path: "cmd/main.go", Urgency: reportfinding.High}) {
		t.Errorf("sast: %+v", s)
	}
	sca := reportfinding.Finding{Kind: reportfinding.SCA, Tool: "osv-scanner", RuleID: "GHSA-xxxx", Urgency: reportfinding.Critical,
		SCA: &reportfinding.Dependency{Name: "lodash", Ecosystem: "npm", Manifest: "web/package-lock.json"}}
	if s := OfFinding(7, sca); s != (Subject{ProjectID: 7, Tool: "osv-scanner", RuleID: "GHSA-xxxx", Path: "web/package-lock.json", Package: "lodash", Ecosystem: "npm", Urgency: reportfinding.Critical}) {
		t.Errorf("sca: %+v", s)
	}
}

func TestMatch(t *testing.T) {
	subject := Subject{ProjectID: 1, Tool: "Semgrep OSS+gosec", RuleID: "G401", CWE: 328, Path: "internal/auth/token_test.go",
		Package: "Django", Ecosystem: "Debian:12", Urgency: reportfinding.Medium}
	cases := []struct {
		name string
		m    Matcher
		want bool
	}{
		{"tool, any case", Matcher{Tool: "GOSEC"}, true},
		{"one of joined tools", Matcher{Tool: "semgrep oss"}, true},
		{"the joined tools whole", Matcher{Tool: "Semgrep OSS+gosec"}, true},
		{"another tool", Matcher{Tool: "gose"}, false},
		{"rule id exact", Matcher{RuleID: "G401"}, true},
		{"rule id case differs", Matcher{RuleID: "g401"}, false},
		{"cwe", Matcher{CWE: 328}, true},
		{"other cwe", Matcher{CWE: 327}, false},
		{"glob over directories", Matcher{Path: "**/*_test.go"}, true},
		{"glob anchored at the root", Matcher{Path: "test/**"}, false},
		{"glob of one directory level", Matcher{Path: "internal/*.go"}, false},
		{"package, any case", Matcher{Package: "django"}, true},
		{"other package", Matcher{Package: "flask"}, false},
		{"ecosystem matches its releases", Matcher{Ecosystem: "Debian"}, true},
		{"other ecosystem", Matcher{Ecosystem: "Ubuntu"}, false},
		{"at least ME holds for ME", Matcher{UrgencyAtLeast: "ME"}, true},
		{"at least HI fails for ME", Matcher{UrgencyAtLeast: "HI"}, false},
		{"at most ME holds for ME", Matcher{UrgencyAtMost: "ME"}, true},
		{"at most LO fails for ME", Matcher{UrgencyAtMost: "LO"}, false},
		{"range around ME", Matcher{UrgencyAtLeast: "ME", UrgencyAtMost: "ME"}, true},
		{"every condition holds", Matcher{Tool: "gosec", RuleID: "G401", CWE: 328, Path: "internal/**", UrgencyAtMost: "HI"}, true},
		{"one condition fails", Matcher{Tool: "gosec", RuleID: "G401", CWE: 79}, false},
	}
	for _, c := range cases {
		if got := c.m.Match(subject); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// A subject without a file, a package or a known urgency meets no
	// condition on them.
	bare := Subject{Tool: "gosec", Urgency: "??"}
	for _, m := range []Matcher{{Path: "**"}, {Package: "x"}, {Ecosystem: "Go"}, {UrgencyAtLeast: "LO"}, {UrgencyAtMost: "CR"}, {CWE: 79}} {
		if m.Match(bare) {
			t.Errorf("%+v matches %+v", m, bare)
		}
	}
}

func TestApply(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rule := func(id string, project int64, minutes int, m Matcher) Rule {
		return Rule{ID: id, ProjectID: project, CreatedAt: t0.Add(time.Duration(minutes) * time.Minute), Matcher: m,
			Action: Action{Status: "false_positive", Reason: id}}
	}
	tests := Matcher{Path: "test/**"}
	gosec := Matcher{Tool: "gosec"}
	rules := []Rule{
		rule("company-old", 0, 0, gosec),
		rule("company-new", 0, 5, tests),
		rule("p1-new", 1, 10, gosec),
		rule("p1-old", 1, 1, tests),
		rule("p2", 2, 0, gosec),
		rule("p1-same-b", 1, 20, Matcher{CWE: 79}),
		rule("p1-same-a", 1, 20, Matcher{CWE: 79}),
	}
	cases := []struct {
		name string
		s    Subject
		want string // "" when no rule applies
	}{
		{"project rules first, the older of them", Subject{ProjectID: 1, Tool: "gosec", Path: "test/a.go"}, "p1-old"},
		{"the one project rule that matches beats an older company rule", Subject{ProjectID: 1, Tool: "gosec", Path: "src/a.go"}, "p1-new"},
		{"company rules by creation", Subject{ProjectID: 3, Tool: "gosec", Path: "test/a.go"}, "company-old"},
		{"another project's rule does not apply", Subject{ProjectID: 3, Tool: "semgrep", Path: "test/a.go"}, "company-new"},
		{"same instant: by id", Subject{ProjectID: 1, CWE: 79}, "p1-same-a"},
		{"nothing matches", Subject{ProjectID: 2, Tool: "semgrep", Path: "src/a.go"}, ""},
	}
	for _, c := range cases {
		// The order given does not matter.
		for _, rs := range [][]Rule{rules, reversed(rules)} {
			r, ok := Apply(rs, c.s)
			if got := map[bool]string{true: r.ID}[ok]; got != c.want {
				t.Errorf("%s: %q, want %q", c.name, got, c.want)
			}
		}
	}
	if _, ok := Apply(nil, Subject{ProjectID: 1}); ok {
		t.Error("no rules applied")
	}
}

func reversed(rs []Rule) []Rule {
	out := make([]Rule, len(rs))
	for i, r := range rs {
		out[len(rs)-1-i] = r
	}
	return out
}
