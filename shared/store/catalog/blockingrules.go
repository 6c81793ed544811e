package catalog

import (
	"context"
	"errors"
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// blockingRuleCount counts a company's blocking rules.
const blockingRuleCount = "BLOCKRULES"

// CreateBlockingRule stores a new rule with the next id; its slug guard,
// the rule and the count are one transaction, so a slug already used in the
// company is ddb.ErrConflict and nothing is written.
func (s *Catalog) CreateBlockingRule(ctx context.Context, r schema.BlockingRule) (schema.BlockingRule, error) {
	id, err := s.l.NextID(ctx, "blocking_rule")
	if err != nil {
		return schema.BlockingRule{}, err
	}
	r.ID, r.Key = id, schema.BlockingRuleKey(r.CompanyID, id)
	r.CreatedAt = s.t.Stamp()
	r.UpdatedAt = r.CreatedAt
	guard, err := s.t.TxPutNew(schema.BlockingRuleSlugRef{Key: schema.BlockingRuleSlugKey(r.CompanyID, r.Slug), RuleID: id})
	if err != nil {
		return schema.BlockingRule{}, err
	}
	item, err := s.t.TxPutNew(r)
	if err != nil {
		return schema.BlockingRule{}, err
	}
	counted, err := s.l.TxCount(r.CompanyID, blockingRuleCount, 1)
	if err != nil {
		return schema.BlockingRule{}, err
	}
	audit, err := s.l.TxAudit(ctx, r.CompanyID, ruleAudit("blocking_rule.create", schema.BlockingRule{}, r))
	if err != nil {
		return schema.BlockingRule{}, err
	}
	return r, s.t.Transact(ctx, append([]types.TransactWriteItem{guard, item, counted}, audit...))
}

// ruleAudit is the audit entry of a rule's change from before to after
// (the zero rule: none).
func ruleAudit(action string, before, after schema.BlockingRule) ledger.AuditEntry {
	fields := func(r schema.BlockingRule) map[string]any {
		if r.ID == 0 {
			return map[string]any{}
		}
		return map[string]any{"slug": r.Slug, "name": r.Name, "active": r.Active, "ci": r.CI, "conditions": r.Conditions}
	}
	b, a := fields(before), fields(after)
	changes := map[string]ledger.Change{}
	for _, k := range []string{"slug", "name", "active", "ci", "conditions"} {
		if !reflect.DeepEqual(b[k], a[k]) {
			changes[k] = ledger.Change{Before: b[k], After: a[k]}
		}
	}
	id := max(before.ID, after.ID)
	return ledger.AuditEntry{Action: action, TargetType: "blocking_rule", TargetID: strconv.FormatInt(id, 10), Changes: changes}
}

// GetBlockingRule reads a rule of a company.
func (s *Catalog) GetBlockingRule(ctx context.Context, companyID, id int64) (schema.BlockingRule, error) {
	var r schema.BlockingRule
	err := s.t.GetItem(ctx, schema.BlockingRuleKey(companyID, id), &r)
	return r, err
}

// BlockingRuleBySlug finds a rule of a company by slug.
func (s *Catalog) BlockingRuleBySlug(ctx context.Context, companyID int64, slug string) (schema.BlockingRule, error) {
	var ref schema.BlockingRuleSlugRef
	if err := s.t.GetItem(ctx, schema.BlockingRuleSlugKey(companyID, slug), &ref); err != nil {
		return schema.BlockingRule{}, err
	}
	return s.GetBlockingRule(ctx, companyID, ref.RuleID)
}

// UpdateBlockingRule replaces a rule with r (same id), moving its slug
// guard when the slug changes, in one transaction conditional on the rule
// still having the slug it was read with (oldSlug): ddb.ErrConflict when the
// new slug is taken or the rule changed meanwhile, ddb.ErrNotFound when it is
// gone.
func (s *Catalog) UpdateBlockingRule(ctx context.Context, oldSlug string, r schema.BlockingRule) (schema.BlockingRule, error) {
	var before schema.BlockingRule
	if err := s.t.GetItemConsistent(ctx, schema.BlockingRuleKey(r.CompanyID, r.ID), &before); err != nil {
		return schema.BlockingRule{}, err
	}
	r.Key = schema.BlockingRuleKey(r.CompanyID, r.ID)
	r.UpdatedAt = s.t.Stamp()
	cond := expression.AttributeExists(expression.Name(tabledef.PK)).And(expression.Name("slug").Equal(expression.Value(oldSlug)))
	item, err := s.t.TxPut(r, &cond)
	if err != nil {
		return schema.BlockingRule{}, err
	}
	items := []types.TransactWriteItem{item}
	if r.Slug != oldSlug {
		guard, err := s.t.TxPutNew(schema.BlockingRuleSlugRef{Key: schema.BlockingRuleSlugKey(r.CompanyID, r.Slug), RuleID: r.ID})
		if err != nil {
			return schema.BlockingRule{}, err
		}
		old, err := s.t.TxDelete(schema.BlockingRuleSlugKey(r.CompanyID, oldSlug), expression.Name("rule_id").Equal(expression.Value(r.ID)))
		if err != nil {
			return schema.BlockingRule{}, err
		}
		items = append(items, guard, old)
	}
	audit, err := s.l.TxAudit(ctx, r.CompanyID, ruleAudit("blocking_rule.update", before, r))
	if err != nil {
		return schema.BlockingRule{}, err
	}
	err = s.t.Transact(ctx, append(items, audit...))
	if errors.Is(err, ddb.ErrConflict) {
		if _, gerr := s.GetBlockingRule(ctx, r.CompanyID, r.ID); errors.Is(gerr, ddb.ErrNotFound) {
			return schema.BlockingRule{}, ddb.ErrNotFound
		}
	}
	return r, err
}

// DeleteBlockingRule removes a rule, its slug guard and its count in one
// transaction; ddb.ErrNotFound when the company has no such rule.
func (s *Catalog) DeleteBlockingRule(ctx context.Context, companyID, id int64) error {
	r, err := s.GetBlockingRule(ctx, companyID, id)
	if err != nil {
		return err
	}
	item, err := s.t.TxDelete(r.Key, expression.Name("slug").Equal(expression.Value(r.Slug)))
	if err != nil {
		return err
	}
	guard, err := s.t.TxDelete(schema.BlockingRuleSlugKey(companyID, r.Slug), expression.Name("rule_id").Equal(expression.Value(id)))
	if err != nil {
		return err
	}
	counted, err := s.l.TxCount(companyID, blockingRuleCount, -1)
	if err != nil {
		return err
	}
	audit, err := s.l.TxAudit(ctx, companyID, ruleAudit("blocking_rule.delete", r, schema.BlockingRule{}))
	if err != nil {
		return err
	}
	err = s.t.Transact(ctx, append([]types.TransactWriteItem{item, guard, counted}, audit...))
	if errors.Is(err, ddb.ErrConflict) {
		return ddb.ErrNotFound // deleted (or changed) concurrently
	}
	return err
}

// ListBlockingRules reads one page of a company's rules by id, with the
// company's total.
func (s *Catalog) ListBlockingRules(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.BlockingRule], error) {
	l := page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(schema.BlockingRulePrefix), Forward: true}
	return counted.Page[schema.BlockingRule](ctx, s.t, s.l, companyID, l, q, blockingRuleCount)
}

// AllBlockingRules returns every rule of a company, by id (the gate
// evaluates them all; a company has a handful).
func (s *Catalog) AllBlockingRules(ctx context.Context, companyID int64) ([]schema.BlockingRule, error) {
	var out []schema.BlockingRule
	err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), schema.BlockingRulePrefix), true, &out)
	return out, err
}
