package store

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/ledger"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/triagerule"
)

// Triage rules reach SCA findings as they reach SAST issues (see
// triage/triageapply.go): at ingestion (PutScanSCAIssues) and by an explicit
// application, counted exactly by its dry run. SCA findings have no
// history and no status counters (their counters are totals, which a
// status does not move): a finding a rule changed carries the rule's id
// and reason, and the application's audit entry counts them.
//
// Only rules that set a status act on SCA findings: their urgency is their
// advisory's severity (SCAUrgency), which a rule does not change.

// scaSubject is what a rule looks at of an SCA finding but its advisory
// ids (see scaRule).
func scaSubject(i SCAIssue) triagerule.Subject {
	return triagerule.Subject{ProjectID: i.ProjectID, Tool: i.Tool, CWE: i.CWE, Path: i.Location.Path,
		Package: i.Package.Name, Ecosystem: i.Package.Ecosystem, Urgency: SCAUrgency(i.Severity)}
}

// advisories are the ids a rule's rule_id may name of a finding: its
// primary advisory, its CVE and its other ids.
func (i SCAIssue) advisories() []string {
	return slices.Compact(append([]string{i.Classification, i.CVE}, i.IDs...))
}

// scaRule is the status rule that acts on finding i, in triagerule.Apply's
// order; a rule's rule_id matches any of the finding's advisory ids.
func scaRule(rules []triagerule.Rule, i SCAIssue) (triagerule.Rule, bool) {
	var fit []triagerule.Rule
	for _, r := range rules {
		if r.Action.Status == "" || (r.Matcher.RuleID != "" && !slices.Contains(i.advisories(), r.Matcher.RuleID)) {
			continue
		}
		r.Matcher.RuleID = "" // checked above, against every advisory id
		fit = append(fit, r)
	}
	return triagerule.Apply(fit, scaSubject(i))
}

// ruledSCA is i with r's status and reason.
func ruledSCA(i SCAIssue, r triagerule.Rule) SCAIssue {
	i.Status, i.Reason, i.TriageRuleID = r.Action.Status, r.Action.Reason, r.ID
	return i
}

// scaAppliesTo reports whether applying r changes existing finding i: as
// appliesTo, a status goes to findings still to act on (open,
// fix_in_progress) and must move them.
func scaAppliesTo(r triagerule.Rule, i SCAIssue) bool {
	if i.Status != "open" && i.Status != "fix_in_progress" {
		return false
	}
	got, ok := scaRule([]triagerule.Rule{r}, i)
	return ok && (i.Status != got.Action.Status || i.Reason != got.Action.Reason)
}

// scaRuleTargets are the ids of the SCA findings applying r changes, read
// from the rule's scope (its project's list, or the company's); past more
// than upTo of them (when upTo > 0) it stops reading.
func (s *Store) scaRuleTargets(ctx context.Context, companyID int64, r triagerule.Rule, upTo int) ([]string, error) {
	var ids []string
	q := PageQuery{Limit: 1000}
	for {
		found, res, _, err := s.ListSCAIssues(ctx, companyID, r.ProjectID, q)
		if err != nil {
			return nil, err
		}
		for _, i := range found {
			if scaAppliesTo(r, i) {
				ids = append(ids, i.ID)
			}
		}
		if res.Next == "" || (upTo > 0 && len(ids) > upTo) {
			return ids, nil
		}
		q.Token = res.Next
	}
}

// ApplyTriageRuleAll is ApplyTriageRule over the company's SAST issues and
// its SCA findings: the counts and samples add up (SAST ids first). An
// application past MaxRuleApply of either kind does not run at once: it
// is stored as an operation (startRuleOp, answered in the result's
// Operation) that the bulk triage worker runs to its end. At once, the SCA
// findings change after the SAST issues, each conditional on the status
// and reason read, with one audit entry (triage_rule.apply_sca) in the
// first write.
func (s *Store) ApplyTriageRuleAll(ctx context.Context, companyID int64, id string, dryRun bool, userID int64) (RuleApplication, error) {
	stored, err := s.GetTriageRule(ctx, companyID, id)
	switch {
	case err != nil:
		return RuleApplication{}, err
	case stored.Ended(s.t.Clock()):
		return RuleApplication{}, ErrRuleEnded
	case !dryRun && !stored.Active():
		return RuleApplication{}, ErrRuleInactive
	}
	r := stored.Model()
	upTo := MaxRuleApply // past it, the application runs as an operation
	if dryRun {
		upTo = 0
	}
	ids, err := s.scaRuleTargets(ctx, companyID, r, upTo)
	if err != nil {
		return RuleApplication{}, err
	}
	if !dryRun && len(ids) > MaxRuleApply {
		return s.startRuleOp(ctx, stored, userID)
	}
	res, err := s.ApplyTriageRule(ctx, companyID, stored, dryRun, userID)
	if many := (*ErrRuleTooMany)(nil); errors.As(err, &many) {
		return s.startRuleOp(ctx, stored, userID)
	}
	if err != nil {
		return res, err
	}
	if dryRun {
		return res.Plus(ids), nil
	}
	done, err := s.applySCARule(ctx, companyID, stored, ids)
	return res.Plus(done), err
}

// startRuleOp stores the operation that applies the active rule stored,
// by userID, with the application's one audit entry (triage_rule.apply,
// naming the operation).
func (s *Store) startRuleOp(ctx context.Context, stored TriageRule, userID int64) (RuleApplication, error) {
	op := TriageOp{CompanyID: stored.CompanyID, UserID: userID, RuleID: stored.ID, Status: stored.Action.Status, Reason: stored.Action.Reason}
	op, err := s.CreateRuleOp(ctx, op, ledger.AuditEntry{Action: "triage_rule.apply", TargetType: "triage_rule", TargetID: stored.ID,
		Changes: map[string]ledger.Change{"rule": {After: triagerule.Show(stored.Matcher, stored.Action)}}})
	if err != nil {
		return RuleApplication{}, err
	}
	return RuleApplication{Operation: &op}, nil
}

// An application operation's cursor says which listing it collects from:
// the rule's SAST issues (ruleIssues followed by the list's token, or
// empty at the start), then, for a status rule, its SCA findings
// (scaMarker followed by the list's token). The SCA findings' ids carry
// scaMarker in the id pages too, so a page says which kind it holds.
const (
	ruleIssues = "issues:"
	scaMarker  = "sca:"
)

// CollectRulePage collects one listing page of an application operation
// (of at most limit items) from its cursor: the ids of the issues, then
// of the SCA findings, that applying its rule changes (see
// CollectTriageIDs; ErrConflict when another delivery collected that page
// first). ErrRuleGone or ErrRuleInactive when the rule was deleted or
// disabled since the operation was asked for.
func (s *Store) CollectRulePage(ctx context.Context, op TriageOp, limit int) (TriageOp, error) {
	r, err := s.OpRule(ctx, op)
	if err != nil {
		return op, err
	}
	var ids []string
	next := ""
	if token, ok := strings.CutPrefix(op.Cursor, scaMarker); ok {
		found, res, _, err := s.ListSCAIssues(ctx, op.CompanyID, r.ProjectID, PageQuery{Limit: limit, Token: token})
		if err != nil {
			return op, err
		}
		for _, i := range found {
			if scaAppliesTo(r, i) {
				ids = append(ids, scaMarker+i.ID)
			}
		}
		if res.Next != "" {
			next = scaMarker + res.Next
		}
	} else {
		var token string
		ids, token, err = s.RuleTargetPage(ctx, op.CompanyID, r, strings.TrimPrefix(op.Cursor, ruleIssues), limit)
		if err != nil {
			return op, err
		}
		switch {
		case token != "":
			next = ruleIssues + token
		case r.Action.Status != "": // only status rules act on SCA findings
			next = scaMarker
		}
	}
	return s.CollectTriageIDs(ctx, op, ids, next)
}

// ApplyTriagePage is the triage area's, which applies a page of issue ids,
// and applies a page of an application's SCA finding ids (scaStep).
func (s *Store) ApplyTriagePage(ctx context.Context, op TriageOp) (TriageOp, error) {
	if op.RuleID == "" || op.State != TriageApplying || op.Page >= op.Pages {
		return s.Triage.ApplyTriagePage(ctx, op)
	}
	ids, err := s.TriageIDs(ctx, op.CompanyID, op.ID, op.Page)
	if err != nil {
		return op, err
	}
	if len(ids) == 0 || !strings.HasPrefix(ids[0], scaMarker) {
		return s.Triage.ApplyTriageIDs(ctx, op, ids)
	}
	r, err := s.OpRule(ctx, op)
	if err != nil {
		return op, err
	}
	return s.ApplySteps(ctx, op, ids, s.scaStep(r))
}

// scaStep gives r's status to the next SCA findings of the page that it
// still changes, in one transaction with the checkpoint (a finding changed
// meanwhile fails its condition: the step is read again).
func (s *Store) scaStep(r triagerule.Rule) triage.Step {
	return func(ctx context.Context, op TriageOp, ids []string) (TriageOp, []Issue, error) {
		batch := triage.StepBatch(op, ids)
		keys := make([]Key, len(batch))
		for n, id := range batch {
			keys[n] = scaKey(op.CompanyID, strings.TrimPrefix(id, scaMarker))
		}
		got, err := s.t.ReadBatch(ctx, keys, true)
		if err != nil {
			return op, nil, err
		}
		var items []types.TransactWriteItem
		for _, k := range keys {
			item, ok, err := s.scaRuleWrite(k, got[k], r)
			if err != nil {
				return op, nil, err
			}
			if ok {
				items = append(items, item)
			}
		}
		next := triage.Advanced(op, len(ids), len(batch), len(items))
		adv, err := s.TxAdvance(op, next)
		if err != nil {
			return op, nil, err
		}
		if err := s.t.Transact(ctx, append(items, adv)); err != nil {
			return op, nil, err
		}
		return next, nil, nil
	}
}

// scaRuleWrite is the conditional write that gives r's status to the SCA
// finding av (at k) when applying r still changes it (false for one gone
// or changed meanwhile).
func (s *Store) scaRuleWrite(k Key, av map[string]types.AttributeValue, r triagerule.Rule) (types.TransactWriteItem, bool, error) {
	if av == nil {
		return types.TransactWriteItem{}, false, nil
	}
	var i SCAIssue
	if err := attributevalue.UnmarshalMap(av, &i); err != nil {
		return types.TransactWriteItem{}, false, err
	}
	if !scaAppliesTo(r, i) {
		return types.TransactWriteItem{}, false, nil
	}
	after := ruledSCA(i, r)
	upd := expression.Set(expression.Name("status"), expression.Value(after.Status)).
		Set(expression.Name("triage_rule_id"), expression.Value(after.TriageRuleID))
	if after.Reason != "" {
		upd = upd.Set(expression.Name("reason"), expression.Value(after.Reason))
	} else {
		upd = upd.Remove(expression.Name("reason"))
	}
	cond := expression.Name("status").Equal(expression.Value(i.Status))
	if i.Reason != "" {
		cond = cond.And(expression.Name("reason").Equal(expression.Value(i.Reason)))
	} else {
		cond = cond.And(expression.AttributeNotExists(expression.Name("reason")))
	}
	item, err := s.t.TxUpdate(k, upd, &cond)
	return item, err == nil, err
}

// scaApplyChunk is the findings one transaction of an application
// changes, leaving room for the audit entry's two items.
const scaApplyChunk = ddb.MaxTxItems - 2

// applySCARule gives rule's status to the findings of ids it still
// changes, in transactions of a chunk each (a finding changed meanwhile
// fails its condition: the chunk is read again), and returns the ids
// changed. The audit entry goes with the first write and counts the
// findings planned (ids), which only a concurrent change of one of them
// makes differ from those changed.
func (s *Store) applySCARule(ctx context.Context, companyID int64, stored TriageRule, ids []string) ([]string, error) {
	r := stored.Model()
	var done []string
	for chunk := range slices.Chunk(ids, scaApplyChunk) {
		err := s.t.Retrying(ctx, func() error {
			keys := make([]Key, len(chunk))
			for n, id := range chunk {
				keys[n] = scaKey(companyID, id)
			}
			got, err := s.t.ReadBatch(ctx, keys, true)
			if err != nil {
				return err
			}
			var items []types.TransactWriteItem
			var changed []string
			for n, k := range keys {
				item, ok, err := s.scaRuleWrite(k, got[k], r)
				if err != nil {
					return err
				}
				if ok {
					items, changed = append(items, item), append(changed, chunk[n])
				}
			}
			if len(done) == 0 && len(changed) > 0 {
				audit, err := s.l.TxAudit(ctx, companyID, ledger.AuditEntry{Action: "triage_rule.apply_sca", TargetType: "triage_rule", TargetID: stored.ID,
					Changes: map[string]ledger.Change{"sca_findings_changed": {After: len(ids)}, "rule": {After: triagerule.Show(r.Matcher, r.Action)}}})
				if err != nil {
					return err
				}
				items = append(items, audit...)
			}
			if len(items) == 0 {
				return nil
			}
			if err := s.t.Transact(ctx, items); err != nil {
				return err
			}
			done = append(done, changed...)
			return nil
		})
		if err != nil {
			return done, err
		}
	}
	return done, nil
}
