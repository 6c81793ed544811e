package triagemodel

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/cwe"
	"github.com/acme/codescan-api/shared/pathglob"
)

// Limits of one rule.
const (
	MaxID         = 512             // bytes of a tool, rule id, package or ecosystem
	MaxPatternLen = pathglob.MaxLen // bytes of a path glob
	MaxReason     = 2000            // bytes of a reason, as for manual triage
)

// Body is the API form of a rule's matcher and action; a route's request
// type embeds it beside its own members. Absent and null members are
// unset.
type Body struct {
	Matcher *MatcherBody `json:"matcher"`
	Action  *ActionBody  `json:"action"`
}

// MatcherBody is the API form of a Matcher. cwe is "CWE-79", "79" or 79.
type MatcherBody struct {
	Tool           *string         `json:"tool"`
	RuleID         *string         `json:"rule_id"`
	CWE            json.RawMessage `json:"cwe"`
	Path           *string         `json:"path"`
	Package        *string         `json:"package"`
	Ecosystem      *string         `json:"ecosystem"`
	UrgencyAtLeast *string         `json:"urgency_at_least"`
	UrgencyAtMost  *string         `json:"urgency_at_most"`
}

// ActionBody is the API form of an Action; expires_at is RFC 3339.
type ActionBody struct {
	Status    *string `json:"status"`
	Reason    *string `json:"reason"`
	ExpiresAt *string `json:"expires_at"`
	Urgency   *string `json:"urgency"`
}

// FieldError is a rule body's fault: Field names the member
// ("matcher.path"), Problem what is wrong with it. Its text is the
// message a 400 answers with.
type FieldError struct {
	Field, Problem string
}

func (e *FieldError) Error() string { return e.Field + " " + e.Problem }

func fault(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// Parse validates a rule body into its matcher and action; now is when the
// rule is written (an acceptance's expiry is bounded from it). The error
// is a *FieldError.
func Parse(b Body, now time.Time) (Matcher, Action, error) {
	if b.Matcher == nil {
		return Matcher{}, Action{}, fault("matcher", "is required")
	}
	m, err := parseMatcher(*b.Matcher)
	if err != nil {
		return Matcher{}, Action{}, err
	}
	if b.Action == nil {
		return Matcher{}, Action{}, fault("action", "is required")
	}
	a, err := parseAction(*b.Action, now)
	if err != nil {
		return Matcher{}, Action{}, err
	}
	return m, a, nil
}

func parseMatcher(b MatcherBody) (Matcher, error) {
	var m Matcher
	var err error
	for _, f := range []struct {
		name string
		in   *string
		out  *string
	}{{"tool", b.Tool, &m.Tool}, {"rule_id", b.RuleID, &m.RuleID}, {"package", b.Package, &m.Package}} {
		if *f.out, err = identifier("matcher."+f.name, f.in); err != nil {
			return Matcher{}, err
		}
	}
	if m.CWE, err = parseCWE(b.CWE); err != nil {
		return Matcher{}, err
	}
	if b.Path != nil {
		p := strings.TrimSpace(*b.Path)
		switch {
		case p == "":
			return Matcher{}, fault("matcher.path", "must not be empty")
		case len(p) > MaxPatternLen:
			return Matcher{}, fault("matcher.path", "exceeds %d bytes", MaxPatternLen)
		}
		if err := pathglob.Valid(p); err != nil {
			return Matcher{}, fault("matcher.path", "%.40q is %v", p, err)
		}
		m.Path = p
	}
	if b.Ecosystem != nil {
		e, ok := canonicalEcosystem(*b.Ecosystem)
		if !ok {
			return Matcher{}, fault("matcher.ecosystem", "%q is not a known ecosystem (%s)", strings.TrimSpace(*b.Ecosystem), strings.Join(Ecosystems, ", "))
		}
		m.Ecosystem = e
	}
	for _, f := range []struct {
		name string
		in   *string
		out  *string
	}{{"matcher.urgency_at_least", b.UrgencyAtLeast, &m.UrgencyAtLeast}, {"matcher.urgency_at_most", b.UrgencyAtMost, &m.UrgencyAtMost}} {
		if *f.out, err = urgency(f.name, f.in); err != nil {
			return Matcher{}, err
		}
	}
	if m.UrgencyAtLeast != "" && m.UrgencyAtMost != "" && rank(m.UrgencyAtLeast) > rank(m.UrgencyAtMost) {
		return Matcher{}, fault("matcher.urgency_at_most", "(%s) is more urgent than matcher.urgency_at_least (%s): no urgency lies between", m.UrgencyAtMost, m.UrgencyAtLeast)
	}
	if m == (Matcher{}) {
		return Matcher{}, fault("matcher", "must name at least one condition")
	}
	return m, nil
}

// identifier reads an optional exact-match member: trimmed, not empty,
// at most MaxID bytes.
func identifier(field string, in *string) (string, error) {
	if in == nil {
		return "", nil
	}
	s := strings.TrimSpace(*in)
	switch {
	case s == "":
		return "", fault(field, "must not be empty")
	case len(s) > MaxID:
		return "", fault(field, "exceeds %d bytes", MaxID)
	}
	return s, nil
}

func parseCWE(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if id, ok := cwe.Parse(n.String()); ok {
			return known(id)
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if id, ok := cwe.Parse(s); ok {
			return known(id)
		}
	}
	return 0, fault("matcher.cwe", "must be a CWE id (CWE-79 or 79)")
}

// known refuses an id MITRE's catalogue does not hold: a rule on it would
// never match what a scanner reports.
func known(id int) (int, error) {
	if _, ok := cwe.Lookup(id); !ok {
		return 0, fault("matcher.cwe", "%s is not in the CWE catalogue (version %s)", cwe.FormatID(id), cwe.Version)
	}
	return id, nil
}

func urgency(field string, in *string) (string, error) {
	if in == nil {
		return "", nil
	}
	u := strings.ToUpper(strings.TrimSpace(*in))
	if rank(u) == 0 {
		return "", fault(field, "must be one of %s", strings.Join(Urgencies, ", "))
	}
	return u, nil
}

func parseAction(b ActionBody, now time.Time) (Action, error) {
	var a Action
	var err error
	if a.Urgency, err = urgency("action.urgency", b.Urgency); err != nil {
		return Action{}, err
	}
	if b.Status != nil {
		a.Status = strings.ToLower(strings.TrimSpace(*b.Status))
		if !slices.Contains(Statuses, a.Status) {
			return Action{}, fault("action.status", "must be one of %s", strings.Join(Statuses, ", "))
		}
	}
	switch {
	case a.Status == "" && a.Urgency == "":
		return Action{}, fault("action", "must set a status or an urgency")
	case a.Status != "" && a.Urgency != "":
		return Action{}, fault("action", "sets a status or an urgency, not both")
	}
	if b.Reason != nil {
		a.Reason = strings.TrimSpace(*b.Reason)
		if len(a.Reason) > MaxReason {
			return Action{}, fault("action.reason", "exceeds %d bytes", MaxReason)
		}
	}
	if a.Status != AcceptedRisk {
		if b.ExpiresAt != nil {
			return Action{}, fault("action.expires_at", "is only for status %s", AcceptedRisk)
		}
		return a, nil
	}
	if a.Reason == "" {
		return Action{}, fault("action.reason", "is required for status %s", AcceptedRisk)
	}
	if b.ExpiresAt == nil {
		return Action{}, fault("action.expires_at", "is required for status %s", AcceptedRisk)
	}
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(*b.ExpiresAt))
	if err != nil {
		return Action{}, fault("action.expires_at", "must be an RFC 3339 time (2026-06-30T00:00:00Z)")
	}
	switch limit := now.Add(MaxRiskAcceptance); {
	case !at.After(now):
		return Action{}, fault("action.expires_at", "must be in the future")
	case at.After(limit):
		return Action{}, fault("action.expires_at", "must be at most 365 days ahead (%s at the latest)", limit.UTC().Format(time.RFC3339))
	}
	a.ExpiresAt = at.UTC()
	return a, nil
}

// View is the API form of a stored matcher and action: every member
// present, null when unset.
type View struct {
	Matcher MatcherView `json:"matcher"`
	Action  ActionView  `json:"action"`
}

// MatcherView is the API form of a Matcher; cwe is written "CWE-79".
type MatcherView struct {
	Tool           *string `json:"tool"`
	RuleID         *string `json:"rule_id"`
	CWE            *string `json:"cwe"`
	Path           *string `json:"path"`
	Package        *string `json:"package"`
	Ecosystem      *string `json:"ecosystem"`
	UrgencyAtLeast *string `json:"urgency_at_least"`
	UrgencyAtMost  *string `json:"urgency_at_most"`
}

// ActionView is the API form of an Action.
type ActionView struct {
	Status    *string `json:"status"`
	Reason    *string `json:"reason"`
	ExpiresAt *string `json:"expires_at"`
	Urgency   *string `json:"urgency"`
}

// Show is the API form of m and a; parsing it back gives them again.
func Show(m Matcher, a Action) View {
	v := View{
		Matcher: MatcherView{Tool: set(m.Tool), RuleID: set(m.RuleID), Path: set(m.Path), Package: set(m.Package),
			Ecosystem: set(m.Ecosystem), UrgencyAtLeast: set(m.UrgencyAtLeast), UrgencyAtMost: set(m.UrgencyAtMost)},
		Action: ActionView{Status: set(a.Status), Reason: set(a.Reason), Urgency: set(a.Urgency)},
	}
	if m.CWE != 0 {
		v.Matcher.CWE = set(cwe.FormatID(m.CWE))
	}
	if !a.ExpiresAt.IsZero() {
		v.Action.ExpiresAt = set(a.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return v
}

func set(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
