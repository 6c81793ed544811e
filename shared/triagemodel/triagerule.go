// Package triagemodel is the model of triage rules (docs/findings.md#triage-rules): a matcher
// over a finding's tool, rule, CWE, file, package and urgency, and the
// action taken on what it matches (a status with its reason, or an
// urgency). It parses and validates a rule's API form, matches findings at
// ingestion and existing issues alike, and picks the rule that applies. It
// holds no storage: the caller passes the active rules.
package triagemodel

import (
	"slices"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/pathglob"
	"github.com/acme/codescan-api/shared/reportfinding"
)

// Urgencies are the urgency codes, most urgent first (finding's codes).
var Urgencies = []string{reportfinding.Critical, reportfinding.High, reportfinding.Medium, reportfinding.Low}

// Statuses a rule may set: dismissals and work in progress. `open` is
// where issues start, `fixed` is a fact of scans, `suppressed` comes from
// the code and `duplicate` names another issue a rule cannot know.
var Statuses = []string{"false_positive", "accepted_risk", "fix_in_progress"}

// Dismisses reports whether the action dismisses what it matches (marks it
// a false positive or an accepted risk): such a rule is a triage decision,
// which only people who may triage issues may make.
func (a Action) Dismisses() bool {
	return a.Status == "false_positive" || a.Status == AcceptedRisk
}

// AcceptedRisk is the status that needs a reason and an expiry.
const AcceptedRisk = "accepted_risk"

// MaxRiskAcceptance is the furthest an acceptance may expire after its
// rule is written.
const MaxRiskAcceptance = 365 * 24 * time.Hour

// Matcher is a rule's conditions; every one set must hold, and at least
// one is set. Zero values are unset.
type Matcher struct {
	// Tool is the scanner; it matches a subject whose tool is it, or names
	// it among tools joined with "+" (a report of several tools).
	Tool string `dynamodbav:"tool,omitempty"`
	// RuleID is the scanner's rule (or an SCA finding's advisory), exactly.
	RuleID string `dynamodbav:"rule_id,omitempty"`
	CWE    int    `dynamodbav:"cwe,omitempty"`
	// Path is a glob (shared/pathglob) over the repo-relative file path.
	Path string `dynamodbav:"path,omitempty"`
	// Package and Ecosystem name an SCA finding's dependency, in any case;
	// Ecosystem is OSV's name and also matches its releases ("Debian"
	// matches "Debian:12").
	Package   string `dynamodbav:"package,omitempty"`
	Ecosystem string `dynamodbav:"ecosystem,omitempty"`
	// UrgencyAtLeast and UrgencyAtMost bound the urgency, inclusive.
	UrgencyAtLeast string `dynamodbav:"urgency_at_least,omitempty"`
	UrgencyAtMost  string `dynamodbav:"urgency_at_most,omitempty"`
}

// Action is what a rule does: set Status (with Reason, and ExpiresAt for
// accepted_risk), or set Urgency; exactly one of Status and Urgency.
type Action struct {
	Status    string    `dynamodbav:"status,omitempty"`
	Reason    string    `dynamodbav:"reason,omitempty"`
	ExpiresAt time.Time `dynamodbav:"expires_at,omitempty"`
	Urgency   string    `dynamodbav:"urgency,omitempty"`
}

// Rule is a stored rule as far as applying it goes.
type Rule struct {
	ID string
	// ProjectID scopes the rule to one project; 0 is company-wide.
	ProjectID int64
	CreatedAt time.Time
	// CreatedBy is the rule's author: the owner of the risks it accepts.
	CreatedBy int64
	Matcher   Matcher
	Action    Action
}

// Subject is what a rule looks at: filled from a finding at ingestion
// (OfFinding) or from an existing issue's fields. Path is "" when the
// finding names no file (the "(no location)"); Urgency is an
// urgency code (an SCA issue's severity mapped to one).
type Subject struct {
	ProjectID          int64
	Tool, RuleID       string
	CWE                int
	Path               string
	Package, Ecosystem string
	Urgency            string
}

// OfFinding is the subject of a finding of a project: an SCA finding's
// path is its manifest, as its issue's location.
func OfFinding(projectID int64, f reportfinding.Finding) Subject {
	s := Subject{ProjectID: projectID, Tool: f.Tool, RuleID: f.RuleID, CWE: f.CWE, Path: f.Path, Urgency: f.Urgency}
	if d := f.SCA; d != nil {
		s.Package, s.Ecosystem = d.Name, d.Ecosystem
		if d.Manifest != "" {
			s.Path = d.Manifest
		}
	}
	return s
}

// rank orders urgencies, most urgent highest; unknown codes rank 0.
func rank(u string) int {
	if i := slices.Index(Urgencies, u); i >= 0 {
		return len(Urgencies) - i
	}
	return 0
}

// Match reports whether s meets every condition of m.
func (m Matcher) Match(s Subject) bool {
	switch {
	case m.Tool != "" && !matchTool(m.Tool, s.Tool):
		return false
	case m.RuleID != "" && m.RuleID != s.RuleID:
		return false
	case m.CWE != 0 && m.CWE != s.CWE:
		return false
	case m.Package != "" && !strings.EqualFold(m.Package, s.Package):
		return false
	case m.Ecosystem != "" && !strings.EqualFold(m.Ecosystem, ecosystemBase(s.Ecosystem)):
		return false
	case m.UrgencyAtLeast != "" && (rank(s.Urgency) == 0 || rank(s.Urgency) < rank(m.UrgencyAtLeast)):
		return false
	case m.UrgencyAtMost != "" && (rank(s.Urgency) == 0 || rank(s.Urgency) > rank(m.UrgencyAtMost)):
		return false
	}
	if m.Path == "" {
		return true
	}
	return s.Path != "" && pathglob.Match(m.Path, s.Path)
}

func matchTool(want, tool string) bool {
	for t := range strings.SplitSeq(tool, "+") {
		if strings.EqualFold(want, t) {
			return true
		}
	}
	return strings.EqualFold(want, tool)
}

// ecosystemBase drops an OSV ecosystem's release suffix ("Debian:12").
func ecosystemBase(e string) string {
	base, _, _ := strings.Cut(e, ":")
	return base
}

// Applies reports whether r covers s: its project (or every project, for
// a company-wide rule) and its matcher.
func (r Rule) Applies(s Subject) bool {
	return (r.ProjectID == 0 || r.ProjectID == s.ProjectID) && r.Matcher.Match(s)
}

// before is the order in which rules are tried: project rules before
// company-wide ones (the narrower decision wins), then by creation, then
// by id so rules created at the same instant keep one order.
func before(a, b Rule) bool {
	if (a.ProjectID != 0) != (b.ProjectID != 0) {
		return a.ProjectID != 0
	}
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.Before(b.CreatedAt)
	}
	return a.ID < b.ID
}

// Apply returns the rule whose action s receives: the first of rules, in
// the order above, that applies to s; false when none does. Only one rule
// acts on a finding. rules are the active ones, in any order.
func Apply(rules []Rule, s Subject) (Rule, bool) {
	var best Rule
	found := false
	for _, r := range rules {
		if (!found || before(r, best)) && r.Applies(s) {
			best, found = r, true
		}
	}
	return best, found
}
