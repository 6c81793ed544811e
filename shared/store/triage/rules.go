package triage

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// Triage rules (docs/findings.md#triage-rules): a company's rules, company-wide or for one project, each a matcher
// and an action (shared/triagemodel). A rule is active while it is enabled
// and, when it requires approval, approved by an admin other than its
// author. Ingestion reads the active rules of a scan's company and project
// by key: an active rule also has an entry in its scope's partition (the
// company's, or the project's), written and removed in the transaction
// that makes it active or not. Every change is audited in that
// transaction too.

// Rule is a stored triage rule.
type Rule struct {
	ddb.Key
	// ID is a version 7 uuid: rules list in creation order by id.
	ID        string `dynamodbav:"id"`
	CompanyID int64  `dynamodbav:"company_id"`
	// ProjectID scopes the rule to one project; 0 is company-wide.
	ProjectID int64               `dynamodbav:"project_id"`
	Matcher   triagemodel.Matcher `dynamodbav:"matcher"`
	Action    triagemodel.Action  `dynamodbav:"action"`
	Enabled   bool                `dynamodbav:"enabled"`
	// RequiresApproval holds the rule inactive until ApprovedBy (a user
	// other than CreatedBy) approves it.
	RequiresApproval bool   `dynamodbav:"requires_approval"`
	ApprovedBy       int64  `dynamodbav:"approved_by,omitempty"`
	ApprovedAt       string `dynamodbav:"approved_at,omitempty"`
	CreatedBy        int64  `dynamodbav:"created_by"`
	CreatedAt        string `dynamodbav:"created_at"`
	UpdatedAt        string `dynamodbav:"updated_at"`
	// Version counts the rule's writes; every change is conditional on it.
	Version int64 `dynamodbav:"ver"`
}

// Active reports whether the rule acts on findings.
func (r Rule) Active() bool { return r.Enabled && (!r.RequiresApproval || r.ApprovedBy != 0) }

// Ended reports whether r accepts risks until a moment that is not after
// now: it acts no more, at ingestion or by an application.
func (r Rule) Ended(now time.Time) bool {
	a := r.Action
	return a.Status == triagemodel.AcceptedRisk && !a.ExpiresAt.IsZero() && !a.ExpiresAt.After(now)
}

// Model is the rule as triagemodel applies it.
func (r Rule) Model() triagemodel.Rule {
	at, _ := time.Parse(time.RFC3339, r.CreatedAt) // written by CreateTriageRule
	return triagemodel.Rule{ID: r.ID, ProjectID: r.ProjectID, CreatedAt: at, CreatedBy: r.CreatedBy, Matcher: r.Matcher, Action: r.Action}
}

// Errors of Approve.
var (
	// ErrOwnApproval: the rule's author cannot approve it.
	ErrOwnApproval = errors.New("a rule cannot be approved by its author")
	// ErrNoApproval: the rule does not require approval.
	ErrNoApproval = errors.New("the rule does not require approval")
)

func activeKey(r Rule) ddb.Key {
	return ddb.Key{PK: schema.TriageRuleActivePK(r.CompanyID, r.ProjectID), SK: r.ID}
}

// CreateTriageRule stores a new rule (CompanyID, ProjectID, Matcher,
// Action, Enabled, RequiresApproval and CreatedBy set by the caller) with
// its active entry when it is active, its count and its audit entry
// (triage_rule.create), in one transaction.
func (x *Triage) CreateTriageRule(ctx context.Context, r Rule) (Rule, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return Rule{}, err
	}
	r.ID, r.Key = id.String(), schema.TriageRuleKey(r.CompanyID, id.String())
	r.CreatedAt, r.Version = x.t.Stamp(), 1
	r.UpdatedAt, r.ApprovedBy, r.ApprovedAt = r.CreatedAt, 0, ""
	put, err := x.t.TxPutNew(r)
	if err != nil {
		return Rule{}, err
	}
	counted, err := x.l.TxCount(r.CompanyID, schema.TriageRulesCount, 1)
	if err != nil {
		return Rule{}, err
	}
	return r, x.commitRule(ctx, "triage_rule.create", Rule{}, r, put, counted)
}

// GetTriageRule reads a rule of a company; ErrNotFound for an id that is
// not a uuid or not the company's.
func (x *Triage) GetTriageRule(ctx context.Context, companyID int64, id string) (Rule, error) {
	cid, ok := schema.CanonicalUUID(id)
	if !ok {
		return Rule{}, ddb.ErrNotFound
	}
	var r Rule
	err := x.t.GetItemConsistent(ctx, schema.TriageRuleKey(companyID, cid), &r)
	return r, err
}

// ListTriageRules reads one page of a company's rules, oldest first, with
// the company's total.
func (x *Triage) ListTriageRules(ctx context.Context, companyID int64, q page.Request) (page.Page[Rule], error) {
	l := page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(schema.TriageRuleSKPrefix), Forward: true}
	return counted.Page[Rule](ctx, x.t, x.l, companyID, l, q, schema.TriageRulesCount)
}

// SetTriageRuleEnabled enables or disables a rule (triage_rule.enable,
// triage_rule.disable); a rule already so is answered unchanged.
func (x *Triage) SetTriageRuleEnabled(ctx context.Context, companyID int64, id string, enabled bool) (Rule, error) {
	return x.changeRule(ctx, companyID, id, func(r *Rule) (string, error) {
		if r.Enabled == enabled {
			return "", nil
		}
		r.Enabled = enabled
		if enabled {
			return "triage_rule.enable", nil
		}
		return "triage_rule.disable", nil
	})
}

// ApproveTriageRule records userID's approval of a rule that requires one
// (triage_rule.approve): ErrNoApproval when it does not, ErrOwnApproval
// when userID wrote it; an approved rule is answered unchanged.
func (x *Triage) ApproveTriageRule(ctx context.Context, companyID int64, id string, userID int64) (Rule, error) {
	return x.changeRule(ctx, companyID, id, func(r *Rule) (string, error) {
		switch {
		case !r.RequiresApproval:
			return "", ErrNoApproval
		case r.ApprovedBy != 0:
			return "", nil
		case userID == r.CreatedBy:
			return "", ErrOwnApproval
		}
		r.ApprovedBy, r.ApprovedAt = userID, x.t.Stamp()
		return "triage_rule.approve", nil
	})
}

// DeleteTriageRule removes a rule, its active entry and its count
// (triage_rule.delete) and returns it as it was.
func (x *Triage) DeleteTriageRule(ctx context.Context, companyID int64, id string) (Rule, error) {
	var before Rule
	err := x.t.Retrying(ctx, func() error {
		var err error
		if before, err = x.GetTriageRule(ctx, companyID, id); err != nil {
			return err
		}
		del, err := x.t.TxDelete(before.Key, expression.Name("ver").Equal(expression.Value(before.Version)))
		if err != nil {
			return err
		}
		counted, err := x.l.TxCount(companyID, schema.TriageRulesCount, -1)
		if err != nil {
			return err
		}
		return x.commitRule(ctx, "triage_rule.delete", before, Rule{}, del, counted)
	})
	return before, err
}

// changeRule applies edit to a rule read consistently and writes it,
// conditional on its version, with its active entry and the audit entry
// of the action edit names ("" when nothing changes).
func (x *Triage) changeRule(ctx context.Context, companyID int64, id string, edit func(*Rule) (string, error)) (Rule, error) {
	var after Rule
	err := x.t.Retrying(ctx, func() error {
		before, err := x.GetTriageRule(ctx, companyID, id)
		if err != nil {
			return err
		}
		after = before
		action, err := edit(&after)
		if err != nil || action == "" {
			return err
		}
		after.Version, after.UpdatedAt = before.Version+1, x.t.Stamp()
		cond := expression.Name("ver").Equal(expression.Value(before.Version))
		put, err := x.t.TxPut(after, &cond)
		if err != nil {
			return err
		}
		return x.commitRule(ctx, action, before, after, put)
	})
	return after, err
}

// commitRule writes a rule's change from before to after (zero: none) in one
// transaction: items, the active entry as after's activity says, and the
// audit entry.
func (x *Triage) commitRule(ctx context.Context, action string, before, after Rule, items ...types.TransactWriteItem) error {
	switch was, is := before.ID != "" && before.Active(), after.ID != "" && after.Active(); {
	case is:
		entry := after
		entry.Key = activeKey(after)
		put, err := x.t.TxPut(entry, nil)
		if err != nil {
			return err
		}
		items = append(items, put)
	case was:
		items = append(items, x.t.TxDeleteKey(activeKey(before)))
	}
	audit, err := x.l.TxAudit(ctx, max(before.CompanyID, after.CompanyID), ruleAudit(action, before, after))
	if err != nil {
		return err
	}
	return x.t.Transact(ctx, append(items, audit...))
}

// ruleAudit is the audit entry of a rule's change from before to after.
func ruleAudit(action string, before, after Rule) ledger.AuditEntry {
	fields := func(r Rule) map[string]any {
		if r.ID == "" {
			return map[string]any{}
		}
		out := map[string]any{"project_id": r.ProjectID, "rule": triagemodel.Show(r.Matcher, r.Action), "enabled": r.Enabled,
			"requires_approval": r.RequiresApproval, "active": r.Active()}
		if r.ApprovedBy != 0 {
			out["approved_by"] = r.ApprovedBy
		}
		return out
	}
	b, a := fields(before), fields(after)
	changes := map[string]ledger.Change{}
	for _, k := range []string{"project_id", "rule", "enabled", "requires_approval", "approved_by", "active"} {
		if !reflect.DeepEqual(b[k], a[k]) {
			changes[k] = ledger.Change{Before: b[k], After: a[k]}
		}
	}
	id := after.ID
	if id == "" {
		id = before.ID
	}
	return ledger.AuditEntry{Action: action, TargetType: "triage_rule", TargetID: id, Changes: changes}
}

// ActiveTriageRules are the rules that act on findings of a project: the
// company's active rules and the project's, read by key (two partitions),
// but for acceptance rules whose end has passed.
func (x *Triage) ActiveTriageRules(ctx context.Context, companyID, projectID int64) ([]triagemodel.Rule, error) {
	var out []triagemodel.Rule
	for _, p := range slices.Compact([]int64{0, projectID}) {
		var rules []Rule
		if err := x.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.TriageRuleActivePK(companyID, p), ""), true, &rules); err != nil {
			return nil, err
		}
		for _, r := range rules {
			if !r.Ended(x.t.Clock()) {
				out = append(out, r.Model())
			}
		}
	}
	return out, nil
}

// RuleApplyAudit is the audit entry of applying a rule to existing issues.
func RuleApplyAudit(r Rule, changed int) ledger.AuditEntry {
	return ledger.AuditEntry{Action: "triage_rule.apply", TargetType: "triage_rule", TargetID: r.ID,
		Changes: map[string]ledger.Change{"issues_changed": {After: changed}, "rule": {After: triagemodel.Show(r.Matcher, r.Action)}}}
}
