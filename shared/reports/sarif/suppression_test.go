package sarif

import (
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/reportfinding"
)

// Real outputs of the tools with a suppression comment beside the same
// finding left unsuppressed (testdata/README.md says how each was made).
func TestRealSuppressions(t *testing.T) {
	type want struct {
		RuleID        string
		Line          int
		Suppressed    bool
		Justification string
	}
	cases := map[string][]want{
		// #nosec G401 -- <reason>, with -track-suppressions.
		"gosec-nosec.sarif": {
			{"G401", 16, false, ""},
			{"G401", 14, true, "cache key, not a security boundary"},
			{"G501", 6, false, ""},
		},
		// //lint:ignore with -show-ignored: staticcheck writes no
		// justification, and an empty array for what it did not ignore.
		"staticcheck-ignored.sarif": {
			{"S1003", 20, true, ""},
			{"S1003", 23, false, ""},
		},
		// Semgrep's SARIF keeps nosemgrep results with a bare suppression.
		"semgrep-nosemgrep.sarif": {
			{"rules.regex.detected-aws-account-id", 1, true, ""},
			{"rules.regex.detected-aws-account-id", 3, false, ""},
		},
	}
	for name, ws := range cases {
		fs := parseFile(t, name)
		if len(fs) != len(ws) {
			t.Fatalf("%s: %d findings, want %d", name, len(fs), len(ws))
		}
		for i, f := range fs {
			got := want{f.RuleID, f.Line, f.Suppression != nil, ""}
			if f.Suppression != nil {
				got.Justification = f.Suppression.Justification
				if f.Suppression.Kind != reportfinding.InSource {
					t.Errorf("%s[%d]: kind %q", name, i, f.Suppression.Kind)
				}
			}
			if got != ws[i] {
				t.Errorf("%s[%d] = %+v, want %+v", name, i, got, ws[i])
			}
		}
	}
}

// Which suppressions arrays hold, per SARIF's kinds and statuses.
func TestSuppressionRules(t *testing.T) {
	cases := []struct {
		name, suppressions string
		want               *reportfinding.Suppression
	}{
		{"absent", ``, nil},
		{"empty array", `,"suppressions":[]`, nil},
		{"in source, no status", `,"suppressions":[{"kind":"inSource","justification":" test fixture "}]`,
			&reportfinding.Suppression{Kind: reportfinding.InSource, Justification: "test fixture"}},
		{"in source, accepted", `,"suppressions":[{"kind":"inSource","status":"accepted"}]`,
			&reportfinding.Suppression{Kind: reportfinding.InSource}},
		{"in source, under review", `,"suppressions":[{"kind":"inSource","status":"underReview"}]`, nil},
		{"in source, rejected", `,"suppressions":[{"kind":"inSource","status":"rejected","justification":"no"}]`, nil},
		{"external, accepted", `,"suppressions":[{"kind":"external","status":"accepted","justification":"dismissed in the tool"}]`, nil},
		{"external then in source", `,"suppressions":[{"kind":"external"},{"kind":"inSource","justification":"b"}]`,
			&reportfinding.Suppression{Kind: reportfinding.InSource, Justification: "b"}},
		{"first holding one gives the reason", `,"suppressions":[{"kind":"inSource","justification":"a"},{"kind":"inSource","justification":"b"}]`,
			&reportfinding.Suppression{Kind: reportfinding.InSource, Justification: "a"}},
		{"a rejected one vetoes an accepted one", `,"suppressions":[{"kind":"inSource","status":"accepted"},{"kind":"external","status":"rejected"}]`, nil},
		{"unknown status does not hold", `,"suppressions":[{"kind":"inSource","status":"maybe"}]`, nil},
		{"null entry", `,"suppressions":[null,{"kind":"inSource"}]`, &reportfinding.Suppression{Kind: reportfinding.InSource}},
		{"long justification is clipped", `,"suppressions":[{"kind":"inSource","justification":"` + strings.Repeat("x", 3000) + `"}]`,
			&reportfinding.Suppression{Kind: reportfinding.InSource, Justification: strings.Repeat("x", 2000)}},
	}
	for _, c := range cases {
		doc := `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":[{"ruleId":"r","message":{"text":"m"}` + c.suppressions + `}]}]}`
		rep, err := Parse([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := rep.Findings[0].Suppression
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// A suppression changes nothing else of a finding: the suppressed and the
// unsuppressed G401 of gosec's output differ only where their code does.
func TestSuppressionKeepsFinding(t *testing.T) {
	fs := parseFile(t, "gosec-nosec.sarif")
	open, held := fs[0], fs[1]
	if open.Kind != held.Kind || open.CWE != held.CWE || open.Urgency != held.Urgency || open.Title != held.Title || open.Tool != held.Tool {
		t.Fatalf("open %+v, suppressed %+v", open, held)
	}
}

// The fixtures from before suppressions were read hold none.
func TestNoSuppressions(t *testing.T) {
	for _, name := range []string{"semgrep.sarif", "codeql.sarif", "gosec.sarif", "gosec-real.sarif", "staticcheck.sarif"} {
		for i, f := range parseFile(t, name) {
			if f.Suppression != nil {
				t.Errorf("%s[%d] suppressed: %+v", name, i, f.Suppression)
			}
		}
	}
}
