package triage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
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
//     (ApplyTriageRuleAll), which a dry run counts first, exactly. One past
//     MaxRuleApply issues runs as an operation (operations.go, RuleID
//     set): collected a listing page at a time (CollectRulePage), applied
//     a transaction at a time (ApplyTriagePage) by the bulk triage worker.
//
// Only one rule acts on an issue (triagemodel.Apply's order). A rule that
// sets a status acts on SCA findings too, at once or in the operation
// after the issues: the SCA area writes them (sca.ApplyRule,
// sca.RuleWrites), this room composes their part with the issues'.

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
		got, next, err := x.ruleTargetPage(ctx, companyID, r, token, 1000)
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

// ruleTargetPage reads one page (of at most limit issues) of r's listing
// (ruleFilter) from token and answers the ids of those applying r changes
// and the token of the next page ("" after the last).
func (x *Triage) ruleTargetPage(ctx context.Context, companyID int64, r triagemodel.Rule, token string, limit int) ([]string, string, error) {
	issues, err := x.lists.ListIssues(ctx, companyID, ruleFilter(r), page.Request{Limit: limit, Token: token})
	if err != nil {
		return nil, "", err
	}
	var ids []string
	for _, i := range issues.Items {
		if appliesTo(r, i) {
			ids = append(ids, i.ID)
		}
	}
	return ids, issues.Next, nil
}

// opRule is the rule an application operation applies, read now:
// ErrRuleGone once deleted, ErrRuleInactive once disabled, ErrRuleEnded
// once its acceptance has ended.
func (x *Triage) opRule(ctx context.Context, op schema.TriageOpItem) (triagemodel.Rule, error) {
	stored, err := x.GetTriageRule(ctx, op.CompanyID, op.RuleID)
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

// applyRuleToIssues applies a rule of the company (as the caller read it)
// to its existing issues through the issue write path, by userID: every
// issue the rule matches whose status or urgency its action moves (see
// appliesTo). A dry run changes nothing and answers the same count. An
// application needs an active rule (ErrRuleInactive) whose acceptance, if
// any, has not ended (ErrRuleEnded, a dry run too) and changes at most
// MaxRuleApply issues (ErrRuleTooMany, nothing changed: the caller runs it
// as an operation); it is audited (triage_rule.apply) with its first
// write, and applying again changes 0.
func (x *Triage) applyRuleToIssues(ctx context.Context, companyID int64, stored Rule, dryRun bool, userID int64) (RuleApplication, error) {
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
	switch {
	case dryRun:
		return RuleApplication{Changed: len(ids), Sample: sample(ids)}, nil
	case !stored.Active():
		return RuleApplication{}, ErrRuleInactive
	case len(ids) > MaxRuleApply:
		return RuleApplication{}, &ErrRuleTooMany{Matched: len(ids)}
	}
	done, err := x.update(ctx, companyID, ids, func(existing map[string]findings.Issue, committed int) (edit, error) {
		return x.ruleEdit(ctx, companyID, stored, findings.Actor{UserID: userID, RuleID: stored.ID}, ids, existing, committed)
	})
	changed := make([]string, len(done))
	for n, c := range done {
		changed[n] = c.After.ID
	}
	return RuleApplication{Changed: len(changed), Sample: sample(changed)}, err
}

// sample is the ids an application answers with.
func sample(ids []string) []string {
	return append([]string{}, ids[:min(len(ids), ruleApplySample)]...)
}

// ruleEdit is what applying stored, by by, changes of the issues of ids
// read (existing), and the application's audit entry, which goes with the
// first write (alone when nothing changes): an attempt after one that
// committed changes writes none.
func (x *Triage) ruleEdit(ctx context.Context, companyID int64, stored Rule, by findings.Actor, ids []string, existing map[string]findings.Issue, committed int) (edit, error) {
	r := stored.Model()
	var changes []findings.IssueChange
	for _, id := range ids {
		before, ok := existing[id]
		if !ok || !appliesTo(r, before) { // changed or gone meanwhile
			continue
		}
		after, _ := findings.Ruled(before, r)
		changes = append(changes, findings.IssueChange{Before: &before, After: &after, By: by, Reason: findings.RuleReason(r, before)})
	}
	if committed > 0 { // an earlier attempt wrote the entry
		return edit{changes: changes}, nil
	}
	audit, err := x.l.TxAudit(ctx, companyID, RuleApplyAudit(stored, len(changes)))
	return edit{changes: changes, items: audit}, err
}

// ApplyTriageRuleAll is applyRuleToIssues over the company's SAST issues and
// its SCA findings: the counts and samples add up (SAST ids first). An
// application past MaxRuleApply of either kind does not run at once: it
// is stored as an operation (startRuleOp, answered in the result's
// Operation) that the bulk triage worker runs to its end. At once, the SCA
// findings change after the SAST issues, each conditional on the status
// and reason read, with one audit entry (triage_rule.apply_sca) in the
// first write.
func (x *Triage) ApplyTriageRuleAll(ctx context.Context, companyID int64, id string, dryRun bool, userID int64) (RuleApplication, error) {
	stored, err := x.GetTriageRule(ctx, companyID, id)
	switch {
	case err != nil:
		return RuleApplication{}, err
	case stored.Ended(x.t.Clock()):
		return RuleApplication{}, ErrRuleEnded
	case !dryRun && !stored.Active():
		return RuleApplication{}, ErrRuleInactive
	}
	r := stored.Model()
	upTo := MaxRuleApply // past it, the application runs as an operation
	if dryRun {
		upTo = 0
	}
	ids, err := x.sca.RuleTargets(ctx, companyID, r, upTo)
	if err != nil {
		return RuleApplication{}, err
	}
	if !dryRun && len(ids) > MaxRuleApply {
		return x.startRuleOp(ctx, stored, userID)
	}
	res, err := x.applyRuleToIssues(ctx, companyID, stored, dryRun, userID)
	if many := (*ErrRuleTooMany)(nil); errors.As(err, &many) {
		return x.startRuleOp(ctx, stored, userID)
	}
	if err != nil {
		return res, err
	}
	if dryRun {
		return res.Plus(ids), nil
	}
	done, err := x.sca.ApplyRule(ctx, companyID, r, ids)
	return res.Plus(done), err
}

// startRuleOp stores the operation that applies the active rule stored,
// by userID, with the application's one audit entry (triage_rule.apply,
// naming the operation).
func (x *Triage) startRuleOp(ctx context.Context, stored Rule, userID int64) (RuleApplication, error) {
	op := schema.TriageOpItem{CompanyID: stored.CompanyID, UserID: userID, RuleID: stored.ID, Status: stored.Action.Status, Reason: stored.Action.Reason}
	op, err := x.CreateRuleOp(ctx, op, ledger.AuditEntry{Action: "triage_rule.apply", TargetType: "triage_rule", TargetID: stored.ID,
		Changes: map[string]ledger.Change{"rule": {After: triagemodel.Show(stored.Matcher, stored.Action)}}})
	if err != nil {
		return RuleApplication{}, err
	}
	return RuleApplication{Operation: &op}, nil
}

// An application operation's cursor says which listing it collects from:
// the rule's SAST issues (ruleIssues followed by the list's token, or
// empty at the start), then, for a status rule, its SCA findings
// (sca.Marker followed by the list's token), whose ids carry sca.Marker in
// the id pages too.
const ruleIssues = "issues:"

// CollectRulePage collects one listing page of an application operation
// (of at most limit items) from its cursor: the ids of the issues, then
// of the SCA findings, that applying its rule changes (see
// CollectTriageIDs; ErrConflict when another delivery collected that page
// first). ErrRuleGone or ErrRuleInactive when the rule was deleted or
// disabled since the operation was asked for.
func (x *Triage) CollectRulePage(ctx context.Context, op schema.TriageOpItem, limit int) (schema.TriageOpItem, error) {
	r, err := x.opRule(ctx, op)
	if err != nil {
		return op, err
	}
	var ids []string
	next := ""
	if token, ok := strings.CutPrefix(op.Cursor, sca.Marker); ok {
		ids, token, err = x.sca.RulePage(ctx, op.CompanyID, r, token, limit)
		if err != nil {
			return op, err
		}
		if token != "" {
			next = sca.Marker + token
		}
	} else {
		var token string
		ids, token, err = x.ruleTargetPage(ctx, op.CompanyID, r, strings.TrimPrefix(op.Cursor, ruleIssues), limit)
		if err != nil {
			return op, err
		}
		switch {
		case token != "":
			next = ruleIssues + token
		case r.Action.Status != "": // only status rules act on SCA findings
			next = sca.Marker
		}
	}
	return x.CollectTriageIDs(ctx, op, ids, next)
}
