package findings

import (
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// Triage rules at ingestion: the rule that applies to an issue a scan
// creates acts on it before any count, gate or notification sees it
// (ruleCreations). Applying a rule to existing issues is the triage
// area's.

// noLocation is the file path of an issue whose finding names none
// (ingest.NoPath): a path glob never matches it.
const noLocation = "(no location)"

// Subject is what a rule looks at of an issue.
func Subject(i Issue) triagemodel.Subject {
	s := triagemodel.Subject{ProjectID: i.ProjectID, Tool: i.Tool, RuleID: i.RuleID, CWE: i.CWE, Path: i.FilePath, Urgency: i.Urgency}
	if s.Path == noLocation {
		s.Path = ""
	}
	return s
}

// Ruled is i with r's action taken, and whether that changes it. An
// acceptance ends when the rule says and is owned by the rule's author.
func Ruled(i Issue, r triagemodel.Rule) (Issue, bool) {
	a := r.Action
	if a.Urgency != "" {
		if i.Urgency == a.Urgency {
			return i, false
		}
		i.Urgency, i.UrgencyRuleID = a.Urgency, r.ID
		return i, true
	}
	if i.Status == a.Status && i.Reason == a.Reason {
		return i, false
	}
	i.Status, i.Reason, i.FixedAt, i.FixedScanID = a.Status, a.Reason, "", ""
	if a.Status == triagemodel.AcceptedRisk {
		i.Terms = schema.Terms{Owner: r.CreatedBy}
		if !a.ExpiresAt.IsZero() {
			i.ExpiresAt = a.ExpiresAt.UTC().Format(time.RFC3339)
		}
	}
	return i, true
}

// RuleReason is the history's reason for a change r made.
func RuleReason(r triagemodel.Rule, before Issue) string {
	why := "triage rule " + r.ID
	switch {
	case r.Action.Urgency != "":
		return fmt.Sprintf("%s: urgency %s -> %s", why, before.Urgency, r.Action.Urgency)
	case r.Action.Reason != "":
		return why + ": " + r.Action.Reason
	}
	return why
}

// ruleCreations takes the action of the rule that applies to each new
// issue of changes (in place, naming the rule as the change's author) and
// returns the new issues by id.
func ruleCreations(rules []triagemodel.Rule, changes []IssueChange) map[string]*Issue {
	created := make(map[string]*Issue, len(changes))
	for n := range changes {
		c := &changes[n]
		if c.Before != nil {
			continue
		}
		created[c.After.ID] = c.After
		if len(rules) == 0 || c.After.Decision.Scope != "" { // people's decision outranks a rule
			continue
		}
		if r, ok := triagemodel.Apply(rules, Subject(*c.After)); ok {
			if after, changed := Ruled(*c.After, r); changed {
				c.By.RuleID, c.Reason = r.ID, RuleReason(r, *c.After)
				*c.After = after
			}
		}
	}
	return created
}
