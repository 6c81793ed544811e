package catalog

import (
	"context"
	"errors"
	"strconv"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// CreatePolicy stores a new policy with the next policy id.
func (s *Catalog) CreatePolicy(ctx context.Context, p schema.Policy) (schema.Policy, error) {
	id, err := s.l.NextID(ctx, "policy")
	if err != nil {
		return schema.Policy{}, err
	}
	p.ID = id
	p.Key = schema.PolicyKey(p.CompanyID, id)
	if p.CreatedAt == "" {
		p.CreatedAt = s.t.Stamp()
	}
	item, err := s.t.TxPutNew(p)
	if err != nil {
		return schema.Policy{}, err
	}
	counted, err := s.l.TxCount(p.CompanyID, policyCount, 1)
	if err != nil {
		return schema.Policy{}, err
	}
	audit, err := s.l.TxAudit(ctx, p.CompanyID, ledger.AuditEntry{
		Action: "policy.create", TargetType: "policy", TargetID: strconv.FormatInt(id, 10),
		Changes: map[string]ledger.Change{"name": {After: p.Name}, "policy_type": {After: p.PolicyType}, "active": {After: p.Active}},
	})
	if err != nil {
		return schema.Policy{}, err
	}
	return p, s.t.Transact(ctx, append([]types.TransactWriteItem{item, counted}, audit...))
}

// GetPolicy reads a policy of a company.
func (s *Catalog) GetPolicy(ctx context.Context, companyID, policyID int64) (schema.Policy, error) {
	var p schema.Policy
	err := s.t.GetItem(ctx, schema.PolicyKey(companyID, policyID), &p)
	return p, err
}

// DeactivatePolicy sets active to false in one conditional write (in a
// transaction with its audit entry) and returns the record; an already
// inactive policy comes back unchanged. ddb.ErrNotFound when the company has no
// such policy.
func (s *Catalog) DeactivatePolicy(ctx context.Context, companyID, policyID int64) (schema.Policy, error) {
	var p schema.Policy
	if err := s.t.GetItemConsistent(ctx, schema.PolicyKey(companyID, policyID), &p); err != nil || !p.Active {
		return p, err
	}
	upd := expression.Set(expression.Name("active"), expression.Value(false))
	cond := expression.Name("active").Equal(expression.Value(true))
	item, err := s.t.TxUpdate(p.Key, upd, &cond)
	if err != nil {
		return schema.Policy{}, err
	}
	audit, err := s.l.TxAudit(ctx, companyID, ledger.AuditEntry{
		Action: "policy.deactivate", TargetType: "policy", TargetID: strconv.FormatInt(policyID, 10),
		Changes: map[string]ledger.Change{"active": {Before: true, After: false}},
	})
	if err != nil {
		return schema.Policy{}, err
	}
	p.Active = false
	err = s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...))
	if errors.Is(err, ddb.ErrConflict) {
		return p, nil // deactivated meanwhile
	}
	return p, err
}
