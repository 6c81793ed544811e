// Package ruleapply is the store's application of a triage rule to the
// findings that exist: the SAST issues (triage) and, for a rule that sets
// a status, the SCA findings (sca), at once or, past MaxRuleApply of
// either kind, as a bulk triage operation whose listing and steps go
// through both kinds in turn. It only composes those areas: each writes
// its own findings.
package ruleapply

import (
	"context"
	"errors"
	"strings"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/store/triageops"
	"github.com/acme/codescan-api/shared/store/triagerules"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// Applier applies triage rules to both kinds of findings.
type Applier struct {
	t      *ddb.Table
	triage *triage.Triage
	rules  *triagerules.TriageRules
	ops    *triageops.TriageOps
	sca    *sca.SCA
}

// New returns the area on a table (its clock) and the areas it composes.
func New(t *ddb.Table, x *triage.Triage, rules *triagerules.TriageRules, ops *triageops.TriageOps, s *sca.SCA) *Applier {
	return &Applier{t: t, triage: x, rules: rules, ops: ops, sca: s}
}

// ApplyTriageRuleAll is ApplyTriageRule over the company's SAST issues and
// its SCA findings: the counts and samples add up (SAST ids first). An
// application past MaxRuleApply of either kind does not run at once: it
// is stored as an operation (startRuleOp, answered in the result's
// Operation) that the bulk triage worker runs to its end. At once, the SCA
// findings change after the SAST issues, each conditional on the status
// and reason read, with one audit entry (triage_rule.apply_sca) in the
// first write.
func (a *Applier) ApplyTriageRuleAll(ctx context.Context, companyID int64, id string, dryRun bool, userID int64) (triage.RuleApplication, error) {
	stored, err := a.rules.GetTriageRule(ctx, companyID, id)
	switch {
	case err != nil:
		return triage.RuleApplication{}, err
	case stored.Ended(a.t.Clock()):
		return triage.RuleApplication{}, triage.ErrRuleEnded
	case !dryRun && !stored.Active():
		return triage.RuleApplication{}, triage.ErrRuleInactive
	}
	r := stored.Model()
	upTo := triage.MaxRuleApply // past it, the application runs as an operation
	if dryRun {
		upTo = 0
	}
	ids, err := a.sca.RuleTargets(ctx, companyID, r, upTo)
	if err != nil {
		return triage.RuleApplication{}, err
	}
	if !dryRun && len(ids) > triage.MaxRuleApply {
		return a.startRuleOp(ctx, stored, userID)
	}
	res, err := a.triage.ApplyTriageRule(ctx, companyID, stored, dryRun, userID)
	if many := (*triage.ErrRuleTooMany)(nil); errors.As(err, &many) {
		return a.startRuleOp(ctx, stored, userID)
	}
	if err != nil {
		return res, err
	}
	if dryRun {
		return res.Plus(ids), nil
	}
	done, err := a.sca.ApplyRule(ctx, companyID, stored, ids)
	return res.Plus(done), err
}

// startRuleOp stores the operation that applies the active rule stored,
// by userID, with the application's one audit entry (triage_rule.apply,
// naming the operation).
func (a *Applier) startRuleOp(ctx context.Context, stored triagerules.Rule, userID int64) (triage.RuleApplication, error) {
	op := schema.TriageOpItem{CompanyID: stored.CompanyID, UserID: userID, RuleID: stored.ID, Status: stored.Action.Status, Reason: stored.Action.Reason}
	op, err := a.ops.CreateRuleOp(ctx, op, ledger.AuditEntry{Action: "triage_rule.apply", TargetType: "triage_rule", TargetID: stored.ID,
		Changes: map[string]ledger.Change{"rule": {After: triagemodel.Show(stored.Matcher, stored.Action)}}})
	if err != nil {
		return triage.RuleApplication{}, err
	}
	return triage.RuleApplication{Operation: &op}, nil
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
func (a *Applier) CollectRulePage(ctx context.Context, op schema.TriageOpItem, limit int) (schema.TriageOpItem, error) {
	r, err := a.triage.OpRule(ctx, op)
	if err != nil {
		return op, err
	}
	var ids []string
	next := ""
	if token, ok := strings.CutPrefix(op.Cursor, sca.Marker); ok {
		ids, token, err = a.sca.RulePage(ctx, op.CompanyID, r, token, limit)
		if err != nil {
			return op, err
		}
		if token != "" {
			next = sca.Marker + token
		}
	} else {
		var token string
		ids, token, err = a.triage.RuleTargetPage(ctx, op.CompanyID, r, strings.TrimPrefix(op.Cursor, ruleIssues), limit)
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
	return a.ops.CollectTriageIDs(ctx, op, ids, next)
}

// ApplyTriagePage is the triage area's, which applies a page of issue ids,
// and applies a page of an application's SCA finding ids (sca.RuleStep).
func (a *Applier) ApplyTriagePage(ctx context.Context, op schema.TriageOpItem) (schema.TriageOpItem, error) {
	if op.RuleID == "" || op.State != triageops.Applying || op.Page >= op.Pages {
		return a.triage.ApplyTriagePage(ctx, op)
	}
	ids, err := a.ops.TriageIDs(ctx, op.CompanyID, op.ID, op.Page)
	if err != nil {
		return op, err
	}
	if len(ids) == 0 || !strings.HasPrefix(ids[0], sca.Marker) {
		return a.triage.ApplyTriageIDs(ctx, op, ids)
	}
	r, err := a.triage.OpRule(ctx, op)
	if err != nil {
		return op, err
	}
	return a.triage.ApplySteps(ctx, op, ids, a.sca.RuleStep(r))
}
