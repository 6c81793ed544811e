// Package gate is the CI gate: blocking rules' conditions, parsed from and
// written to their API form, and evaluated over a scan's issues, and the
// comparison of a scan with its baseline branch. It does no I/O of its own
// (CompareScan reads through the Source its caller gives), so the rule
// logic is tested directly.
package gate

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/cwe"
	"github.com/acme/codescan-api/shared/pathglob"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Conditions is the API form of a rule's conditions; every member is
// optional and an absent one holds for every issue.
type Conditions struct {
	MinUrgency *string  `json:"min_urgency"`
	CWEs       []string `json:"cwes"`
	Paths      []string `json:"paths"`
	Statuses   []string `json:"statuses"`
	OnlyNew    *bool    `json:"only_new"`
}

// Limits of one rule's conditions.
const (
	MaxEntries    = 100             // cwes, paths, statuses (each)
	MaxPatternLen = pathglob.MaxLen // bytes of one path glob
)

var cwePattern = regexp.MustCompile(`^(?i:cwe-)?([0-9]{1,6})$`)

// Parse validates API conditions into their stored form; the error is the
// message a 400 answers with.
func Parse(c Conditions) (schema.RuleConditions, error) {
	var out schema.RuleConditions
	if c.MinUrgency != nil {
		u := strings.ToUpper(strings.TrimSpace(*c.MinUrgency))
		if !slices.Contains(findings.Urgencies, u) {
			return out, fmt.Errorf("conditions.min_urgency must be one of CR, HI, ME, LO")
		}
		out.MinUrgency = u
	}
	for name, n := range map[string]int{"cwes": len(c.CWEs), "paths": len(c.Paths), "statuses": len(c.Statuses)} {
		if n > MaxEntries {
			return out, fmt.Errorf("conditions.%s holds more than %d entries", name, MaxEntries)
		}
	}
	for _, raw := range c.CWEs {
		m := cwePattern.FindStringSubmatch(strings.TrimSpace(raw))
		if m == nil {
			return out, fmt.Errorf("conditions.cwes: %q is not a CWE id (CWE-79 or 79)", raw)
		}
		n, _ := strconv.Atoi(m[1])
		if _, ok := cwe.Lookup(n); !ok {
			return out, fmt.Errorf("conditions.cwes: %s is not in the CWE catalogue (version %s)", cwe.FormatID(n), cwe.Version)
		}
		if !slices.Contains(out.CWEs, n) {
			out.CWEs = append(out.CWEs, n)
		}
	}
	slices.Sort(out.CWEs)
	for _, p := range c.Paths {
		p = strings.TrimSpace(p)
		if p == "" || len(p) > MaxPatternLen {
			return out, fmt.Errorf("conditions.paths: %.40q is not a valid glob: empty or over %d bytes", p, MaxPatternLen)
		}
		if err := pathglob.Valid(p); err != nil {
			return out, fmt.Errorf("conditions.paths: %.40q is %v", p, err)
		}
		if !slices.Contains(out.Paths, p) {
			out.Paths = append(out.Paths, p)
		}
	}
	for _, st := range c.Statuses {
		st = strings.ToLower(strings.TrimSpace(st))
		if !slices.Contains(findings.ManualStatuses, st) { // suppressed findings are never judged
			return out, fmt.Errorf("conditions.statuses: %q is not a status a rule can match (%s)", st, strings.Join(findings.ManualStatuses, ", "))
		}
		if !slices.Contains(out.Statuses, st) {
			out.Statuses = append(out.Statuses, st)
		}
	}
	out.OnlyNew = c.OnlyNew != nil && *c.OnlyNew
	return out, nil
}

// View is the API form of stored conditions (every member present).
type View struct {
	MinUrgency *string  `json:"min_urgency"`
	CWEs       []string `json:"cwes"`
	Paths      []string `json:"paths"`
	Statuses   []string `json:"statuses"`
	OnlyNew    bool     `json:"only_new"`
}

// Show is the API form of c.
func Show(c schema.RuleConditions) View {
	v := View{CWEs: []string{}, Paths: append([]string{}, c.Paths...), Statuses: append([]string{}, c.Statuses...), OnlyNew: c.OnlyNew}
	if c.MinUrgency != "" {
		v.MinUrgency = &c.MinUrgency
	}
	for _, n := range c.CWEs {
		v.CWEs = append(v.CWEs, fmt.Sprintf("CWE-%d", n))
	}
	return v
}

// rank orders urgencies, most urgent highest; unknown codes rank 0.
func rank(u string) int {
	if i := slices.Index(findings.Urgencies, u); i >= 0 {
		return len(findings.Urgencies) - i
	}
	return 0
}

// ActionStatuses are the statuses a rule without a statuses condition
// judges: findings still to act on. A finding people (or a triage rule, or
// a project decision) dismissed blocks only a rule that names its status.
var ActionStatuses = []string{"open", "fix_in_progress"}

// Matches reports whether issue i meets every condition of c; isNew says
// whether i is new (not open on the project's default branch).
func Matches(c schema.RuleConditions, i findings.Issue, isNew bool) bool {
	switch {
	case c.MinUrgency != "" && rank(i.Urgency) < rank(c.MinUrgency):
		return false
	case len(c.CWEs) > 0 && !slices.Contains(c.CWEs, i.CWE):
		return false
	case len(c.Statuses) > 0 && !slices.Contains(c.Statuses, i.Status):
		return false
	case len(c.Statuses) == 0 && !slices.Contains(ActionStatuses, i.Status):
		return false
	case c.OnlyNew && !isNew:
		return false
	}
	if len(c.Paths) == 0 {
		return true
	}
	for _, p := range c.Paths {
		if pathglob.Match(p, i.FilePath) {
			return true
		}
	}
	return false
}

// Blocked is an issue that triggers one or more rules.
type Blocked struct {
	IssueID string
	Rules   []schema.BlockingRule // the rules it triggers, in the order given
}

// Evaluate returns the issues that trigger at least one of rules, in the
// order of issues. isNew is consulted only for rules with only_new. An
// issue the code suppresses triggers nothing.
func Evaluate(rules []schema.BlockingRule, issues []findings.Issue, isNew func(findings.Issue) bool) []Blocked {
	var out []Blocked
	for _, i := range issues {
		if i.Status == findings.Suppressed {
			continue
		}
		var hit []schema.BlockingRule
		for _, r := range rules {
			if Matches(r.Conditions, i, r.Conditions.OnlyNew && isNew(i)) {
				hit = append(hit, r)
			}
		}
		if len(hit) > 0 {
			out = append(out, Blocked{IssueID: i.ID, Rules: hit})
		}
	}
	return out
}

// NeedsNewness reports whether any rule asks for only_new (so the caller
// looks the default branch up only when it matters).
func NeedsNewness(rules []schema.BlockingRule) bool {
	return slices.ContainsFunc(rules, func(r schema.BlockingRule) bool { return r.Conditions.OnlyNew })
}

// Selection is the outcome of resolving a block_on list against the
// company's rules.
type Selection struct {
	Rules                    []schema.BlockingRule
	Unknown, Inactive, NotCI []string
}

// Select picks the rules a gate check evaluates: without slugs, every
// active rule whatever its scope (the legacy --fail); with slugs, those
// rules, each of which must exist, be active and be scoped to CI. The
// lists name the slugs that fail each test, in the order given.
func Select(all []schema.BlockingRule, slugs []string) Selection {
	var sel Selection
	if len(slugs) == 0 {
		for _, r := range all {
			if r.Active {
				sel.Rules = append(sel.Rules, r)
			}
		}
		return sel
	}
	bySlug := map[string]schema.BlockingRule{}
	for _, r := range all {
		bySlug[r.Slug] = r
	}
	for _, s := range slugs {
		r, ok := bySlug[s]
		switch {
		case !ok:
			sel.Unknown = append(sel.Unknown, s)
		case !r.Active:
			sel.Inactive = append(sel.Inactive, s)
		case !r.CI:
			sel.NotCI = append(sel.NotCI, s)
		default:
			sel.Rules = append(sel.Rules, r)
		}
	}
	return sel
}

// Valid reports whether every requested slug was usable.
func (s Selection) Valid() bool {
	return len(s.Unknown) == 0 && len(s.Inactive) == 0 && len(s.NotCI) == 0
}
