package triage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/triagerules"
	"github.com/acme/codescan-api/shared/triagerule"
)

// Triage rules act on issues through the issue write path, so counters,
// trend records, history and events move exactly as for people's triage:
//
//   - at ingestion (ApplyScan), on the issues a scan creates, before any
//     count, gate or notification sees them: the rule's status and reason,
//     or its urgency (kept by later scans: UrgencyRuleID). The history
//     entry (from open) names the rule and the scan; a dismissed issue
//     sends no new-issue event. Existing issues are left as they are.
//   - on existing issues only by an explicit application
//     (ApplyTriageRule), which a dry run counts first, exactly.
//
// Only one rule acts on an issue (triagerule.Apply's order).

// ErrRuleInactive: only an active rule is applied (a dry run of any rule
// is allowed).
var ErrRuleInactive = errors.New("the rule is not active (disabled, or awaiting approval)")

// MaxRuleApply is the most issues one application of a rule changes.
const MaxRuleApply = MaxTriage

// ruleApplySample is how many ids an application answers with.
const ruleApplySample = 20

// ErrRuleTooMany is an application that would change more than
// MaxRuleApply issues; nothing is changed.
type ErrRuleTooMany struct{ Matched int }

func (e *ErrRuleTooMany) Error() string {
	return fmt.Sprintf("the rule would change %d issues; at most %d can be changed at once (narrow its matcher or scope it to a project)", e.Matched, MaxRuleApply)
}

// RuleApplication is what applying a rule to existing issues changes (or,
// in a dry run, would change): how many issues and the first ids.
type RuleApplication struct {
	Changed int
	Sample  []string
}

// Plus is a with the ids of other findings changed too (the sample keeps
// a's ids first).
func (a RuleApplication) Plus(ids []string) RuleApplication {
	a.Changed += len(ids)
	a.Sample = append(a.Sample, ids[:min(len(ids), max(ruleApplySample-len(a.Sample), 0))]...)
	return a
}

// appliesTo reports whether applying r changes existing issue i: it
// matches, and the action moves it. A status is given to issues still to
// act on (open, fix_in_progress), never over people's dismissals, a
// suppression in the code or a scan's fix.
func appliesTo(r triagerule.Rule, i findings.Issue) bool {
	if !r.Applies(findings.Subject(i)) {
		return false
	}
	if r.Action.Status != "" && i.Status != "open" && i.Status != "fix_in_progress" {
		return false
	}
	_, changed := findings.Ruled(i, r)
	return changed
}

// ruleFilter is the narrowest listing of issues that holds every issue r
// may match: its project, its CWE's group or its literal path's.
func ruleFilter(r triagerule.Rule) issuelists.IssueFilter {
	var f issuelists.IssueFilter
	if r.ProjectID != 0 {
		f.Scopes = []findings.Scope{{ProjectID: r.ProjectID}}
	}
	if m := r.Matcher; m.CWE != 0 {
		f.CWE = &m.CWE
	} else if m.Path != "" && !strings.ContainsAny(m.Path, `*?[]{}\`) {
		f.FilePath = m.Path
	}
	return f
}

// ruleTargets are the ids of the existing issues applying r changes.
func (x *Triage) ruleTargets(ctx context.Context, companyID int64, r triagerule.Rule) ([]string, error) {
	var ids []string
	q := page.Request{Limit: 1000}
	for {
		issues, res, _, err := x.lists.ListIssues(ctx, companyID, ruleFilter(r), q)
		if err != nil {
			return nil, err
		}
		for _, i := range issues {
			if appliesTo(r, i) {
				ids = append(ids, i.ID)
			}
		}
		if res.Next == "" {
			return ids, nil
		}
		q.Token = res.Next
	}
}

// ApplyTriageRule applies a rule of the company to its existing issues
// through the issue write path, by userID: every issue the rule matches
// whose status or urgency its action moves (see appliesTo). A dry run
// changes nothing and answers the same count. An application needs an
// active rule (ErrRuleInactive) and changes at most MaxRuleApply issues
// (ErrRuleTooMany, nothing changed); it is audited (triage_rule.apply)
// with its first write, and applying again changes 0.
func (x *Triage) ApplyTriageRule(ctx context.Context, companyID int64, id string, dryRun bool, userID int64) (RuleApplication, error) {
	stored, err := x.rules.GetTriageRule(ctx, companyID, id)
	if err != nil {
		return RuleApplication{}, err
	}
	r := stored.Model()
	ids, err := x.ruleTargets(ctx, companyID, r)
	if err != nil {
		return RuleApplication{}, err
	}
	sample := func(ids []string) []string { return append([]string{}, ids[:min(len(ids), ruleApplySample)]...) }
	switch {
	case dryRun:
		return RuleApplication{Changed: len(ids), Sample: sample(ids)}, nil
	case !stored.Active():
		return RuleApplication{}, ErrRuleInactive
	case len(ids) > MaxRuleApply:
		return RuleApplication{}, &ErrRuleTooMany{Matched: len(ids)}
	}
	var touched []findings.Issue
	var done []string
	by := findings.Actor{UserID: userID, RuleID: r.ID}
	err = x.t.Retrying(ctx, func() error {
		existing, err := findings.ByID(ctx, x.f, companyID, ids)
		if err != nil {
			return err
		}
		var changes []findings.IssueChange
		for _, id := range ids {
			before, ok := existing[id]
			if !ok || !appliesTo(r, before) { // changed or gone meanwhile
				continue
			}
			after, _ := findings.Ruled(before, r)
			touched = append(touched, before)
			changes = append(changes, findings.IssueChange{Before: &before, After: &after, By: by, Reason: findings.RuleReason(r, before)})
		}
		audit, err := x.l.TxAudit(ctx, companyID, triagerules.ApplyAudit(stored, len(done)+len(changes)))
		if err != nil {
			return err
		}
		if len(changes) == 0 {
			if len(done) == 0 { // nothing to write the entry with
				return x.l.Audit(ctx, companyID, triagerules.ApplyAudit(stored, 0))
			}
			return nil
		}
		if len(done) > 0 { // an earlier attempt wrote the entry
			audit = nil
		}
		n, err := findings.Commit(ctx, x.f, companyID, changes, audit...)
		for _, c := range changes[:n] {
			done = append(done, c.After.ID)
		}
		return err
	})
	if err != nil {
		return RuleApplication{Changed: len(done), Sample: sample(done)}, err
	}
	return RuleApplication{Changed: len(done), Sample: sample(done)}, findings.Settle(ctx, x.f, companyID, findings.CounterKeys(companyID, touched))
}
