package tickets

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
)

// CreateRule stores a new ticket rule (a fresh id) with its audit entry;
// ErrLimit past MaxRules.
func (s *Tickets) CreateRule(ctx context.Context, r schema.TicketRule) (schema.TicketRule, error) {
	all, err := s.ListRules(ctx, r.CompanyID)
	if err != nil {
		return schema.TicketRule{}, err
	}
	if len(all) >= MaxRules {
		return schema.TicketRule{}, ErrLimit
	}
	r.ID = uuid.NewString()
	r.Key = schema.TicketRuleKey(r.CompanyID, r.ID)
	r.Revision, r.CreatedAt = 1, s.t.Stamp()
	r.UpdatedAt = r.CreatedAt
	put, err := s.t.TxPutNew(r)
	if err != nil {
		return schema.TicketRule{}, err
	}
	audit, err := s.audit(ctx, r.CompanyID, "ticket_rule.create", "ticket_rule", r.ID, map[string]ledger.Change{"rule": {After: ruleView(r)}})
	if err != nil {
		return schema.TicketRule{}, err
	}
	return r, s.t.Transact(ctx, append([]types.TransactWriteItem{put}, audit...))
}

// ruleView is what the audit log records of a rule.
func ruleView(r schema.TicketRule) map[string]any {
	return map[string]any{"project_id": r.ProjectID, "matcher": r.Matcher, "destination": r.Destination,
		"grouping": r.Grouping, "labels": r.Labels}
}

// GetRule reads a ticket rule of a company.
func (s *Tickets) GetRule(ctx context.Context, companyID int64, id string) (schema.TicketRule, error) {
	var r schema.TicketRule
	return r, s.t.GetItem(ctx, schema.TicketRuleKey(companyID, id), &r)
}

// ListRules reads a company's ticket rules, by id (at most MaxRules).
func (s *Tickets) ListRules(ctx context.Context, companyID int64) ([]schema.TicketRule, error) {
	out := []schema.TicketRule{}
	kc := expression.Key("PK").Equal(expression.Value(schema.TicketRulePK(companyID)))
	return out, s.t.QueryAllConsistent(ctx, kc, &out)
}

// ReplaceRule stores r's matcher, destination, grouping, labels and
// project over the stored rule's, conditional on r.Revision, audited.
func (s *Tickets) ReplaceRule(ctx context.Context, r schema.TicketRule) (schema.TicketRule, error) {
	before, err := s.GetRule(ctx, r.CompanyID, r.ID)
	if err != nil {
		return schema.TicketRule{}, err
	}
	if before.Revision != r.Revision {
		return schema.TicketRule{}, ddb.ErrConflict
	}
	r.Key, r.CreatedAt = before.Key, before.CreatedAt
	r.Revision, r.UpdatedAt = before.Revision+1, s.t.Stamp()
	cond := expression.Name("revision").Equal(expression.Value(before.Revision))
	put, err := s.t.TxPut(r, &cond)
	if err != nil {
		return schema.TicketRule{}, err
	}
	changes := map[string]ledger.Change{}
	if b, a := ruleView(before), ruleView(r); fmt.Sprint(b) != fmt.Sprint(a) {
		changes["rule"] = ledger.Change{Before: b, After: a}
	}
	audit, err := s.audit(ctx, r.CompanyID, "ticket_rule.update", "ticket_rule", r.ID, changes)
	if err != nil {
		return schema.TicketRule{}, err
	}
	return r, s.t.Transact(ctx, append([]types.TransactWriteItem{put}, audit...))
}

// DeleteRule deletes a ticket rule, audited (its tickets stay, and so do
// their links: the findings keep showing them).
func (s *Tickets) DeleteRule(ctx context.Context, companyID int64, id string) error {
	if _, err := s.GetRule(ctx, companyID, id); err != nil {
		return err
	}
	del, err := s.t.TxDelete(schema.TicketRuleKey(companyID, id), expression.AttributeExists(expression.Name("PK")))
	if err != nil {
		return err
	}
	audit, err := s.audit(ctx, companyID, "ticket_rule.delete", "ticket_rule", id, nil)
	if err != nil {
		return err
	}
	if err := s.t.Transact(ctx, append([]types.TransactWriteItem{del}, audit...)); ddb.IsConditionFailed(err) {
		return ddb.ErrNotFound
	} else if err != nil {
		return err
	}
	return nil
}

// RulesUsing reports whether any rule of the company sends to integration.
func (s *Tickets) RulesUsing(ctx context.Context, companyID int64, integration string) (bool, error) {
	all, err := s.ListRules(ctx, companyID)
	return slices.ContainsFunc(all, func(r schema.TicketRule) bool { return r.Destination.Integration == integration }), err
}
