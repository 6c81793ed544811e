package triage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triagerules"
	"github.com/acme/codescan-api/shared/triagemodel"
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
//     (ApplyTriageRule), which a dry run counts first, exactly. One past
//     MaxRuleApply issues runs as an operation (triageops, RuleID set):
//     collected a listing page at a time (RuleTargetPage), applied a
//     transaction at a time (ApplyTriagePage) by the bulk triage worker.
//
// Only one rule acts on an issue (triagemodel.Apply's order).

// ErrRuleInactive: only an active rule is applied (a dry run of any rule
// is allowed).
var ErrRuleInactive = errors.New("the rule is not active (disabled, or awaiting approval)")

// ErrRuleEnded: a rule whose acceptance has ended is applied no more (nor
// counted by a dry run).
var ErrRuleEnded = errors.New("the rule's acceptance has ended (its expires_at has passed): it acts no more")

// ErrRuleGone ends an application operation whose rule was deleted
// since it was asked for.
var ErrRuleGone = errors.New("the rule was deleted")

// MaxRuleApply is the most issues one application of a rule changes at
// once; past it the application runs as an operation.
const MaxRuleApply = MaxTriage

// ruleApplySample is how many ids an application answers with.
const ruleApplySample = 20

// ErrRuleTooMany is an application that would change more than
// MaxRuleApply issues (or SCA findings) at once; nothing is changed.
type ErrRuleTooMany struct{ Matched int }

func (e *ErrRuleTooMany) Error() string {
	return fmt.Sprintf("the rule would change %d issues; at most %d are changed at once", e.Matched, MaxRuleApply)
}

// RuleApplication is what applying a rule to existing issues changes (or,
// in a dry run, would change): how many issues and the first ids; or,
// for an application too large to run at once, the operation that runs
// it.
type RuleApplication struct {
	Changed   int
	Sample    []string
	Operation *schema.TriageOpItem
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
func appliesTo(r triagemodel.Rule, i findings.Issue) bool {
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
func ruleFilter(r triagemodel.Rule) issuelists.IssueFilter {
	var f issuelists.IssueFilter
	if r.ProjectID != 0 {
		f.Scopes = []schema.Scope{{ProjectID: r.ProjectID}}
	}
	if m := r.Matcher; m.CWE != 0 {
		f.CWE = &m.CWE
	} else if m.Path != "" && !strings.ContainsAny(m.Path, `*?[]{}\`) {
		f.FilePath = m.Path
	}
	return f
}

// ruleTargets are the ids of the existing issues applying r changes; past
// more than upTo of them (when upTo > 0) it stops reading (what it answers
// is then only known to be too many).
func (x *Triage) ruleTargets(ctx context.Context, companyID int64, r triagemodel.Rule, upTo int) ([]string, error) {
	var ids []string
	token := ""
	for {
		got, next, err := x.RuleTargetPage(ctx, companyID, r, token, 1000)
		if err != nil {
			return nil, err
		}
		ids = append(ids, got...)
		if next == "" || (upTo > 0 && len(ids) > upTo) {
			return ids, nil
		}
		token = next
	}
}

// RuleTargetPage reads one page (of at most limit issues) of r's listing
// (ruleFilter) from token and answers the ids of those applying r changes
// and the token of the next page ("" after the last).
func (x *Triage) RuleTargetPage(ctx context.Context, companyID int64, r triagemodel.Rule, token string, limit int) ([]string, string, error) {
	issues, res, _, err := x.lists.ListIssues(ctx, companyID, ruleFilter(r), page.Request{Limit: limit, Token: token})
	if err != nil {
		return nil, "", err
	}
	var ids []string
	for _, i := range issues {
		if appliesTo(r, i) {
			ids = append(ids, i.ID)
		}
	}
	return ids, res.Next, nil
}

// OpRule is the rule an application operation applies, read now:
// ErrRuleGone once deleted, ErrRuleInactive once disabled, ErrRuleEnded
// once its acceptance has ended.
func (x *Triage) OpRule(ctx context.Context, op schema.TriageOpItem) (triagemodel.Rule, error) {
	stored, err := x.rules.GetTriageRule(ctx, op.CompanyID, op.RuleID)
	switch {
	case errors.Is(err, ddb.ErrNotFound):
		return triagemodel.Rule{}, ErrRuleGone
	case err != nil:
		return triagemodel.Rule{}, err
	case !stored.Active():
		return triagemodel.Rule{}, ErrRuleInactive
	case stored.Ended(x.t.Clock()):
		return triagemodel.Rule{}, ErrRuleEnded
	}
	return stored.Model(), nil
}

// ApplyTriageRule applies a rule of the company (as the caller read it) to
// its existing issues through the issue write path, by userID: every issue
// the rule matches whose status or urgency its action moves (see
// appliesTo). A dry run
// changes nothing and answers the same count. An application needs an
// active rule (ErrRuleInactive) whose acceptance, if any, has not ended
// (ErrRuleEnded, a dry run too) and changes at most MaxRuleApply issues
// (ErrRuleTooMany, nothing changed: the caller runs it as an operation);
// it is audited (triage_rule.apply) with its first write, and applying
// again changes 0.
func (x *Triage) ApplyTriageRule(ctx context.Context, companyID int64, stored triagerules.Rule, dryRun bool, userID int64) (RuleApplication, error) {
	if stored.Ended(x.t.Clock()) {
		return RuleApplication{}, ErrRuleEnded
	}
	r := stored.Model()
	upTo := MaxRuleApply // an application past it runs as an operation: no need to read further
	if dryRun || !stored.Active() {
		upTo = 0
	}
	ids, err := x.ruleTargets(ctx, companyID, r, upTo)
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
