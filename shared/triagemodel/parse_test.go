package triagemodel

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func parseJSON(t *testing.T, doc string) (Matcher, Action, error) {
	t.Helper()
	var b Body
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	return Parse(b, now)
}

func TestParse(t *testing.T) {
	cases := []struct {
		name, doc string
		matcher   Matcher
		action    Action
	}{
		{"every condition, normalised",
			`{"matcher":{"tool":" gosec ","rule_id":"G401","cwe":"cwe-328","path":"test/**","package":"lodash","ecosystem":"NPM","urgency_at_least":"me","urgency_at_most":"HI"},
			  "action":{"status":"False_Positive","reason":" tests only "}}`,
			Matcher{Tool: "gosec", RuleID: "G401", CWE: 328, Path: "test/**", Package: "lodash", Ecosystem: "npm", UrgencyAtLeast: "ME", UrgencyAtMost: "HI"},
			Action{Status: "false_positive", Reason: "tests only"}},
		{"cwe as a number, urgency action",
			`{"matcher":{"cwe":79},"action":{"urgency":"lo"}}`,
			Matcher{CWE: 79}, Action{Urgency: "LO"}},
		{"cwe as digits, nulls are unset",
			`{"matcher":{"cwe":"89","tool":null},"action":{"status":"fix_in_progress","urgency":null}}`,
			Matcher{CWE: 89}, Action{Status: "fix_in_progress"}},
		{"accepted risk with reason and expiry, stored in UTC",
			`{"matcher":{"package":"golang.org/x/net","ecosystem":"go"},"action":{"status":"accepted_risk","reason":"fix ships in 2.3","expires_at":"2027-01-31T10:00:00+02:00"}}`,
			Matcher{Package: "golang.org/x/net", Ecosystem: "Go"},
			Action{Status: "accepted_risk", Reason: "fix ships in 2.3", ExpiresAt: time.Date(2027, 1, 31, 8, 0, 0, 0, time.UTC)}},
		{"expiry exactly a year ahead",
			`{"matcher":{"rule_id":"x"},"action":{"status":"accepted_risk","reason":"r","expires_at":"2027-11-25T12:00:00Z"}}`,
			Matcher{RuleID: "x"}, Action{Status: "accepted_risk", Reason: "r", ExpiresAt: now.Add(MaxRiskAcceptance)}},
		{"same urgency at both ends",
			`{"matcher":{"urgency_at_least":"CR","urgency_at_most":"CR"},"action":{"urgency":"HI"}}`,
			Matcher{UrgencyAtLeast: "CR", UrgencyAtMost: "CR"}, Action{Urgency: "HI"}},
	}
	for _, c := range cases {
		m, a, err := parseJSON(t, c.doc)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if m != c.matcher || a != c.action {
			t.Errorf("%s: %+v %+v, want %+v %+v", c.name, m, a, c.matcher, c.action)
		}
		// The API form parses back to the same rule.
		view, _ := json.Marshal(Show(m, a))
		m2, a2, err := parseJSON(t, string(view))
		if err != nil || m2 != m || !a2.ExpiresAt.Equal(a.ExpiresAt) || a2.Status != a.Status || a2.Reason != a.Reason || a2.Urgency != a.Urgency {
			t.Errorf("%s: round trip %s: %+v %+v %v", c.name, view, m2, a2, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	long := strings.Repeat("x", MaxID+1)
	cases := []struct{ doc, field, problem string }{
		{`{"action":{"urgency":"LO"}}`, "matcher", "is required"},
		{`{"matcher":{},"action":{"urgency":"LO"}}`, "matcher", "must name at least one condition"},
		{`{"matcher":{"tool":null,"cwe":null},"action":{"urgency":"LO"}}`, "matcher", "must name at least one condition"},
		{`{"matcher":{"tool":"  "},"action":{"urgency":"LO"}}`, "matcher.tool", "must not be empty"},
		{`{"matcher":{"rule_id":"` + long + `"},"action":{"urgency":"LO"}}`, "matcher.rule_id", "exceeds 512 bytes"},
		{`{"matcher":{"package":""},"action":{"urgency":"LO"}}`, "matcher.package", "must not be empty"},
		{`{"matcher":{"path":"src/[a-"},"action":{"urgency":"LO"}}`, "matcher.path", `"src/[a-" is not a valid glob`},
		{`{"matcher":{"path":"src/[z-a]"},"action":{"urgency":"LO"}}`, "matcher.path", `"src/[z-a]" is not a valid glob`},
		{`{"matcher":{"path":"{a,b"},"action":{"urgency":"LO"}}`, "matcher.path", "is not a valid glob"},
		{`{"matcher":{"path":""},"action":{"urgency":"LO"}}`, "matcher.path", "must not be empty"},
		{`{"matcher":{"path":"` + strings.Repeat("a", MaxPatternLen+1) + `"},"action":{"urgency":"LO"}}`, "matcher.path", "exceeds 500 bytes"},
		{`{"matcher":{"cwe":"XSS"},"action":{"urgency":"LO"}}`, "matcher.cwe", "must be a CWE id"},
		{`{"matcher":{"cwe":99999},"action":{"urgency":"LO"}}`, "matcher.cwe", "CWE-99999 is not in the CWE catalogue (version 4.15)"},
		{`{"matcher":{"cwe":"CWE-99999"},"action":{"urgency":"LO"}}`, "matcher.cwe", "is not in the CWE catalogue"},
		{`{"matcher":{"path":"` + strings.Repeat("{*,*}", 22) + `"},"action":{"urgency":"LO"}}`, "matcher.path", "more than 32 wildcards"},
		{`{"matcher":{"cwe":0},"action":{"urgency":"LO"}}`, "matcher.cwe", "must be a CWE id"},
		{`{"matcher":{"cwe":-79},"action":{"urgency":"LO"}}`, "matcher.cwe", "must be a CWE id"},
		{`{"matcher":{"cwe":79.5},"action":{"urgency":"LO"}}`, "matcher.cwe", "must be a CWE id"},
		{`{"matcher":{"cwe":true},"action":{"urgency":"LO"}}`, "matcher.cwe", "must be a CWE id"},
		{`{"matcher":{"ecosystem":"cpan"},"action":{"urgency":"LO"}}`, "matcher.ecosystem", `"cpan" is not a known ecosystem`},
		{`{"matcher":{"urgency_at_least":"urgent"},"action":{"urgency":"LO"}}`, "matcher.urgency_at_least", "must be one of CR, HI, ME, LO"},
		{`{"matcher":{"urgency_at_most":""},"action":{"urgency":"LO"}}`, "matcher.urgency_at_most", "must be one of CR, HI, ME, LO"},
		{`{"matcher":{"urgency_at_least":"HI","urgency_at_most":"LO"},"action":{"urgency":"LO"}}`, "matcher.urgency_at_most", "(LO) is more urgent than"},
		{`{"matcher":{"tool":"t"}}`, "action", "is required"},
		{`{"matcher":{"tool":"t"},"action":{}}`, "action", "must set a status or an urgency"},
		{`{"matcher":{"tool":"t"},"action":{"reason":"r"}}`, "action", "must set a status or an urgency"},
		{`{"matcher":{"tool":"t"},"action":{"status":"false_positive","urgency":"LO"}}`, "action", "not both"},
		{`{"matcher":{"tool":"t"},"action":{"status":"wontfix"}}`, "action.status", "must be one of false_positive, accepted_risk, fix_in_progress"},
		{`{"matcher":{"tool":"t"},"action":{"status":"open"}}`, "action.status", "must be one of"},
		{`{"matcher":{"tool":"t"},"action":{"status":"fixed"}}`, "action.status", "must be one of"},
		{`{"matcher":{"tool":"t"},"action":{"urgency":"XX"}}`, "action.urgency", "must be one of CR, HI, ME, LO"},
		{`{"matcher":{"tool":"t"},"action":{"status":"false_positive","reason":"` + strings.Repeat("r", MaxReason+1) + `"}}`, "action.reason", "exceeds 2000 bytes"},
		{`{"matcher":{"tool":"t"},"action":{"status":"false_positive","expires_at":"2027-01-01T00:00:00Z"}}`, "action.expires_at", "is only for status accepted_risk"},
		{`{"matcher":{"tool":"t"},"action":{"status":"accepted_risk","expires_at":"2027-01-01T00:00:00Z"}}`, "action.reason", "is required for status accepted_risk"},
		{`{"matcher":{"tool":"t"},"action":{"status":"accepted_risk","reason":"  ","expires_at":"2027-01-01T00:00:00Z"}}`, "action.reason", "is required for status accepted_risk"},
		{`{"matcher":{"tool":"t"},"action":{"status":"accepted_risk","reason":"r"}}`, "action.expires_at", "is required for status accepted_risk"},
		{`{"matcher":{"tool":"t"},"action":{"status":"accepted_risk","reason":"r","expires_at":"next year"}}`, "action.expires_at", "must be an RFC 3339 time"},
		{`{"matcher":{"tool":"t"},"action":{"status":"accepted_risk","reason":"r","expires_at":"2026-11-25T12:00:00Z"}}`, "action.expires_at", "must be in the future"},
		{`{"matcher":{"tool":"t"},"action":{"status":"accepted_risk","reason":"r","expires_at":"2020-01-01T00:00:00Z"}}`, "action.expires_at", "must be in the future"},
		{`{"matcher":{"tool":"t"},"action":{"status":"accepted_risk","reason":"r","expires_at":"2027-11-25T12:00:01Z"}}`, "action.expires_at", "must be at most 365 days ahead (2027-11-25T12:00:00Z at the latest)"},
		// The matcher is judged before the action.
		{`{"matcher":{},"action":{}}`, "matcher", "must name at least one condition"},
	}
	for _, c := range cases {
		_, _, err := parseJSON(t, c.doc)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Problem, c.problem) {
			t.Errorf("%.120s: %v, want %s %q", c.doc, err, c.field, c.problem)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.field+" ") {
			t.Errorf("message %q does not name %s", err, c.field)
		}
	}
}
