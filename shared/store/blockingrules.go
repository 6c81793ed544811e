package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/tabledef"
)

// BlockingRule is a company's CI gate rule: a scan is blocked when one of
// its issues meets every condition of an active rule.
type BlockingRule struct {
	Key
	ID         int64          `dynamodbav:"id"`
	CompanyID  int64          `dynamodbav:"company_id"`
	Slug       string         `dynamodbav:"slug"`
	Name       string         `dynamodbav:"name"`
	Active     bool           `dynamodbav:"active"`
	CI         bool           `dynamodbav:"ci"`
	Conditions RuleConditions `dynamodbav:"conditions"`
	CreatedAt  string         `dynamodbav:"created_at"`
	UpdatedAt  string         `dynamodbav:"updated_at"`
}

// RuleConditions must all hold for an issue to trigger a rule; an empty
// condition holds for every issue.
type RuleConditions struct {
	MinUrgency string   `dynamodbav:"min_urgency,omitempty"` // CR, HI, ME or LO
	CWEs       []int    `dynamodbav:"cwes,omitempty"`        // CWE numbers
	Paths      []string `dynamodbav:"paths,omitempty"`       // globs over the file path
	Statuses   []string `dynamodbav:"statuses,omitempty"`    // issue statuses
	OnlyNew    bool     `dynamodbav:"only_new,omitempty"`    // not open on the default branch
}

const blockingRulePrefix = "BLOCKRULE#"

// blockingRuleCount counts a company's blocking rules.
const blockingRuleCount = "BLOCKRULES"

func blockingRuleKey(companyID, id int64) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: fmt.Sprintf("%s%012d", blockingRulePrefix, id)}
}

// blockingRuleSlugKey guards slug uniqueness inside a company and serves
// look-ups by slug (slugs are stored lower-case).
func blockingRuleSlugKey(companyID int64, slug string) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: "BLOCKRULESLUG#" + slug}
}

type blockingRuleSlugRef struct {
	Key
	RuleID int64 `dynamodbav:"rule_id"`
}

// CreateBlockingRule stores a new rule with the next id; its slug guard,
// the rule and the count are one transaction, so a slug already used in the
// company is ErrConflict and nothing is written.
func (s *Store) CreateBlockingRule(ctx context.Context, r BlockingRule) (BlockingRule, error) {
	id, err := s.NextID(ctx, "blocking_rule")
	if err != nil {
		return BlockingRule{}, err
	}
	r.ID, r.Key = id, blockingRuleKey(r.CompanyID, id)
	r.CreatedAt = s.t.Stamp()
	r.UpdatedAt = r.CreatedAt
	guard, err := s.t.TxPutNew(blockingRuleSlugRef{Key: blockingRuleSlugKey(r.CompanyID, r.Slug), RuleID: id})
	if err != nil {
		return BlockingRule{}, err
	}
	item, err := s.t.TxPutNew(r)
	if err != nil {
		return BlockingRule{}, err
	}
	counted, err := s.l.TxCount(r.CompanyID, blockingRuleCount, 1)
	if err != nil {
		return BlockingRule{}, err
	}
	audit, err := s.l.TxAudit(ctx, r.CompanyID, ruleAudit("blocking_rule.create", BlockingRule{}, r))
	if err != nil {
		return BlockingRule{}, err
	}
	return r, s.t.Transact(ctx, append([]types.TransactWriteItem{guard, item, counted}, audit...))
}

// ruleAudit is the audit entry of a rule's change from before to after
// (the zero rule: none).
func ruleAudit(action string, before, after BlockingRule) AuditEntry {
	fields := func(r BlockingRule) map[string]any {
		if r.ID == 0 {
			return map[string]any{}
		}
		return map[string]any{"slug": r.Slug, "name": r.Name, "active": r.Active, "ci": r.CI, "conditions": r.Conditions}
	}
	b, a := fields(before), fields(after)
	changes := map[string]Change{}
	for _, k := range []string{"slug", "name", "active", "ci", "conditions"} {
		if !reflect.DeepEqual(b[k], a[k]) {
			changes[k] = Change{Before: b[k], After: a[k]}
		}
	}
	id := max(before.ID, after.ID)
	return AuditEntry{Action: action, TargetType: "blocking_rule", TargetID: strconv.FormatInt(id, 10), Changes: changes}
}

// GetBlockingRule reads a rule of a company.
func (s *Store) GetBlockingRule(ctx context.Context, companyID, id int64) (BlockingRule, error) {
	var r BlockingRule
	err := s.t.GetItem(ctx, blockingRuleKey(companyID, id), &r)
	return r, err
}

// BlockingRuleBySlug finds a rule of a company by slug.
func (s *Store) BlockingRuleBySlug(ctx context.Context, companyID int64, slug string) (BlockingRule, error) {
	var ref blockingRuleSlugRef
	if err := s.t.GetItem(ctx, blockingRuleSlugKey(companyID, slug), &ref); err != nil {
		return BlockingRule{}, err
	}
	return s.GetBlockingRule(ctx, companyID, ref.RuleID)
}

// UpdateBlockingRule replaces a rule with r (same id), moving its slug
// guard when the slug changes, in one transaction conditional on the rule
// still having the slug it was read with (oldSlug): ErrConflict when the
// new slug is taken or the rule changed meanwhile, ErrNotFound when it is
// gone.
func (s *Store) UpdateBlockingRule(ctx context.Context, oldSlug string, r BlockingRule) (BlockingRule, error) {
	var before BlockingRule
	if err := s.t.GetItemConsistent(ctx, blockingRuleKey(r.CompanyID, r.ID), &before); err != nil {
		return BlockingRule{}, err
	}
	r.Key = blockingRuleKey(r.CompanyID, r.ID)
	r.UpdatedAt = s.t.Stamp()
	cond := expression.AttributeExists(expression.Name(tabledef.PK)).And(expression.Name("slug").Equal(expression.Value(oldSlug)))
	item, err := s.t.TxPut(r, &cond)
	if err != nil {
		return BlockingRule{}, err
	}
	items := []types.TransactWriteItem{item}
	if r.Slug != oldSlug {
		guard, err := s.t.TxPutNew(blockingRuleSlugRef{Key: blockingRuleSlugKey(r.CompanyID, r.Slug), RuleID: r.ID})
		if err != nil {
			return BlockingRule{}, err
		}
		old, err := s.t.TxDelete(blockingRuleSlugKey(r.CompanyID, oldSlug), expression.Name("rule_id").Equal(expression.Value(r.ID)))
		if err != nil {
			return BlockingRule{}, err
		}
		items = append(items, guard, old)
	}
	audit, err := s.l.TxAudit(ctx, r.CompanyID, ruleAudit("blocking_rule.update", before, r))
	if err != nil {
		return BlockingRule{}, err
	}
	err = s.t.Transact(ctx, append(items, audit...))
	if errors.Is(err, ErrConflict) {
		if _, gerr := s.GetBlockingRule(ctx, r.CompanyID, r.ID); errors.Is(gerr, ErrNotFound) {
			return BlockingRule{}, ErrNotFound
		}
	}
	return r, err
}

// DeleteBlockingRule removes a rule, its slug guard and its count in one
// transaction; ErrNotFound when the company has no such rule.
func (s *Store) DeleteBlockingRule(ctx context.Context, companyID, id int64) error {
	r, err := s.GetBlockingRule(ctx, companyID, id)
	if err != nil {
		return err
	}
	item, err := s.t.TxDelete(r.Key, expression.Name("slug").Equal(expression.Value(r.Slug)))
	if err != nil {
		return err
	}
	guard, err := s.t.TxDelete(blockingRuleSlugKey(companyID, r.Slug), expression.Name("rule_id").Equal(expression.Value(id)))
	if err != nil {
		return err
	}
	counted, err := s.l.TxCount(companyID, blockingRuleCount, -1)
	if err != nil {
		return err
	}
	audit, err := s.l.TxAudit(ctx, companyID, ruleAudit("blocking_rule.delete", r, BlockingRule{}))
	if err != nil {
		return err
	}
	err = s.t.Transact(ctx, append([]types.TransactWriteItem{item, guard, counted}, audit...))
	if errors.Is(err, ErrConflict) {
		return ErrNotFound // deleted (or changed) concurrently
	}
	return err
}

// BlockingRulePage is a page of rules by id, with the company's total.
type BlockingRulePage struct {
	Rules []BlockingRule
	Total int
	PageResult
}

// ListBlockingRules reads one page of a company's rules by id.
func (s *Store) ListBlockingRules(ctx context.Context, companyID int64, q PageQuery) (BlockingRulePage, error) {
	var p BlockingRulePage
	var err error
	l := page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(blockingRulePrefix), Forward: true}
	if p.PageResult, err = s.readPage(ctx, l, q, &p.Rules); err != nil {
		return BlockingRulePage{}, err
	}
	p.Total, err = s.l.CompanyCount(ctx, companyID, blockingRuleCount)
	return p, err
}

// AllBlockingRules returns every rule of a company, by id (the gate
// evaluates them all; a company has a handful).
func (s *Store) AllBlockingRules(ctx context.Context, companyID int64) ([]BlockingRule, error) {
	var out []BlockingRule
	err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), blockingRulePrefix), true, &out)
	return out, err
}

// OpenOnBranch reports, for each issue, whether its finding (same tool and
// fingerprint) is an open issue on another branch of its project, by id:
// the only_new test against the project's default branch. It reads the
// counterparts by key, 100 at a time.
func (s *Store) OpenOnBranch(ctx context.Context, companyID int64, branch string, issues []Issue) (map[string]bool, error) {
	ids := make([]string, len(issues))
	for n, i := range issues {
		ids[n] = IssueID(companyID, i.ProjectID, branch, i.Tool, i.Fingerprint)
	}
	out := make(map[string]bool, len(issues))
	for start := 0; start < len(ids); start += 100 {
		got, err := s.issuesByID(ctx, companyID, ids[start:min(start+100, len(ids))])
		if err != nil {
			return nil, err
		}
		for n := start; n < min(start+100, len(ids)); n++ {
			if i, ok := got[ids[n]]; ok && i.Status == "open" {
				out[issues[n].ID] = true
			}
		}
	}
	return out, nil
}
