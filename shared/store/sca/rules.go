package sca

import (
	"context"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// Triage rules reach SCA findings as they reach SAST issues (see
// triage/application.go): at ingestion (PutScanSCAIssues) and by an explicit
// application (the triage room's, which runs this area's part beside
// the SAST issues'), counted exactly by its dry run. SCA findings have no
// history and no status counters (their counters are totals, which a
// status does not move): a finding a rule changed carries the rule's id
// and reason, and the application's audit entry counts them.
//
// Only rules that set a status act on SCA findings: their urgency is their
// advisory's severity (Urgency), which a rule does not change.

// subject is what a rule looks at of an SCA finding but its advisory ids
// (see ruleFor).
func subject(i Issue) triagemodel.Subject {
	return triagemodel.Subject{ProjectID: i.ProjectID, Tool: i.Tool, CWE: i.CWE, Path: i.Location.Path,
		Package: i.Package.Name, Ecosystem: i.Package.Ecosystem, Urgency: Urgency(i.Severity)}
}

// advisories are the ids a rule's rule_id may name of a finding: its
// primary advisory, its CVE and its other ids.
func (i Issue) advisories() []string {
	return slices.Compact(append([]string{i.Classification, i.CVE}, i.IDs...))
}

// ruleFor is the status rule that acts on finding i, in triagemodel.Apply's
// order; a rule's rule_id matches any of the finding's advisory ids.
func ruleFor(rules []triagemodel.Rule, i Issue) (triagemodel.Rule, bool) {
	var fit []triagemodel.Rule
	for _, r := range rules {
		if r.Action.Status == "" || (r.Matcher.RuleID != "" && !slices.Contains(i.advisories(), r.Matcher.RuleID)) {
			continue
		}
		r.Matcher.RuleID = "" // checked above, against every advisory id
		fit = append(fit, r)
	}
	return triagemodel.Apply(fit, subject(i))
}

// ruled is i with r's status and reason.
func ruled(i Issue, r triagemodel.Rule) Issue {
	i.Status, i.Reason, i.TriageRuleID = r.Action.Status, r.Action.Reason, r.ID
	return i
}

// appliesTo reports whether applying r changes existing finding i: as for
// issues (triage), a status goes to findings still to act on (open,
// fix_in_progress) and must move them.
func appliesTo(r triagemodel.Rule, i Issue) bool {
	if i.Status != "open" && i.Status != "fix_in_progress" {
		return false
	}
	got, ok := ruleFor([]triagemodel.Rule{r}, i)
	return ok && (i.Status != got.Action.Status || i.Reason != got.Action.Reason)
}

// RuleTargets are the ids of the SCA findings applying r changes, read
// from the rule's scope (its project's list, or the company's); past more
// than upTo of them (when upTo > 0) it stops reading.
func (x *SCA) RuleTargets(ctx context.Context, companyID int64, r triagemodel.Rule, upTo int) ([]string, error) {
	var ids []string
	q := page.Request{Limit: 1000}
	for {
		found, err := x.ListSCAIssues(ctx, companyID, r.ProjectID, q)
		if err != nil {
			return nil, err
		}
		for _, i := range found.Items {
			if appliesTo(r, i) {
				ids = append(ids, i.ID)
			}
		}
		if found.Next == "" || (upTo > 0 && len(ids) > upTo) {
			return ids, nil
		}
		q.Token = found.Next
	}
}

// Marker starts the SCA finding ids in an application operation's id
// pages (and its cursor while it lists SCA findings), so a page says which
// kind it holds.
const Marker = "sca:"

// RulePage is one listing page of an application operation's SCA part (of
// at most limit findings, from the list's token, "" at the start): the
// ids, marked, of the findings applying r changes, and the next page's
// token ("" after the last).
func (x *SCA) RulePage(ctx context.Context, companyID int64, r triagemodel.Rule, token string, limit int) ([]string, string, error) {
	found, err := x.ListSCAIssues(ctx, companyID, r.ProjectID, page.Request{Limit: limit, Token: token})
	if err != nil {
		return nil, "", err
	}
	var ids []string
	for _, i := range found.Items {
		if appliesTo(r, i) {
			ids = append(ids, Marker+i.ID)
		}
	}
	return ids, found.Next, nil
}

// RuleWrites are the conditional writes that give r's status to the SCA
// findings of ids (marked, see Marker) that it still changes, for one
// transaction of an application operation's step with its checkpoint (a
// finding changed meanwhile fails its condition: the step is read again).
func (x *SCA) RuleWrites(ctx context.Context, companyID int64, r triagemodel.Rule, ids []string) ([]types.TransactWriteItem, error) {
	keys := make([]ddb.Key, len(ids))
	for n, id := range ids {
		keys[n] = schema.SCAIssueKey(companyID, strings.TrimPrefix(id, Marker))
	}
	got, err := x.t.ReadBatch(ctx, keys, true)
	if err != nil {
		return nil, err
	}
	var items []types.TransactWriteItem
	for _, k := range keys {
		item, ok, err := x.ruleWrite(k, got[k], r)
		if err != nil {
			return nil, err
		}
		if ok {
			items = append(items, item)
		}
	}
	return items, nil
}

// ruleWrite is the conditional write that gives r's status to the SCA
// finding av (at k) when applying r still changes it (false for one gone
// or changed meanwhile).
func (x *SCA) ruleWrite(k ddb.Key, av map[string]types.AttributeValue, r triagemodel.Rule) (types.TransactWriteItem, bool, error) {
	if av == nil {
		return types.TransactWriteItem{}, false, nil
	}
	var i Issue
	if err := attributevalue.UnmarshalMap(av, &i); err != nil {
		return types.TransactWriteItem{}, false, err
	}
	if !appliesTo(r, i) {
		return types.TransactWriteItem{}, false, nil
	}
	after := ruled(i, r)
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
	item, err := x.t.TxUpdate(k, upd, &cond)
	return item, err == nil, err
}

// applyChunk is the findings one transaction of an application changes,
// leaving room for the audit entry's two items.
const applyChunk = ddb.MaxTxItems - 2

// ApplyRule gives the rule's status to the findings of ids it
// still changes, in transactions of a chunk each (a finding changed
// meanwhile fails its condition: the chunk is read again), and returns
// the ids changed. The audit entry (triage_rule.apply_sca) goes with the
// first write and counts the findings planned (ids), which only a
// concurrent change of one of them makes differ from those changed.
func (x *SCA) ApplyRule(ctx context.Context, companyID int64, r triagemodel.Rule, ids []string) ([]string, error) {
	var done []string
	for chunk := range slices.Chunk(ids, applyChunk) {
		err := x.t.Retrying(ctx, func() error {
			keys := make([]ddb.Key, len(chunk))
			for n, id := range chunk {
				keys[n] = schema.SCAIssueKey(companyID, id)
			}
			got, err := x.t.ReadBatch(ctx, keys, true)
			if err != nil {
				return err
			}
			var items []types.TransactWriteItem
			var changed []string
			for n, k := range keys {
				item, ok, err := x.ruleWrite(k, got[k], r)
				if err != nil {
					return err
				}
				if ok {
					items, changed = append(items, item), append(changed, chunk[n])
				}
			}
			if len(done) == 0 && len(changed) > 0 {
				audit, err := x.l.TxAudit(ctx, companyID, ledger.AuditEntry{Action: "triage_rule.apply_sca", TargetType: "triage_rule", TargetID: r.ID,
					Changes: map[string]ledger.Change{"sca_findings_changed": {After: len(ids)}, "rule": {After: triagemodel.Show(r.Matcher, r.Action)}}})
				if err != nil {
					return err
				}
				items = append(items, audit...)
			}
			if len(items) == 0 {
				return nil
			}
			if err := x.t.Transact(ctx, items); err != nil {
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
