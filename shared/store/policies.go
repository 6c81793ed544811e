package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Policy is a scanning policy of a company. Deactivation keeps the record.
type Policy struct {
	Key
	ID               int64    `dynamodbav:"id"`
	CompanyID        int64    `dynamodbav:"company_id"`
	PolicyType       string   `dynamodbav:"policy_type"`
	Name             string   `dynamodbav:"name"`
	Description      string   `dynamodbav:"description"`
	GuidanceText     string   `dynamodbav:"guidance_text"`
	CWEs             []string `dynamodbav:"cwes,omitempty"`
	Excludes         []string `dynamodbav:"excludes,omitempty"`
	Projects         []string `dynamodbav:"projects,omitempty"`
	GlobPattern      string   `dynamodbav:"glob_pattern"`
	SourceType       string   `dynamodbav:"source_type"`
	InstructionType  string   `dynamodbav:"instruction_type"`
	Active           bool     `dynamodbav:"active"`
	Approved         bool     `dynamodbav:"approved"`
	ApprovedBy       *int64   `dynamodbav:"approved_by,omitempty"`
	RepoPolicyFile   *int64   `dynamodbav:"repo_policy_file,omitempty"`
	ParentPolicy     *int64   `dynamodbav:"parent_policy,omitempty"`
	Version          int64    `dynamodbav:"version"`
	Archived         bool     `dynamodbav:"archived"`
	ReadOnly         bool     `dynamodbav:"read_only"`
	CreatedByService bool     `dynamodbav:"created_by_service"`
	CreatedAt        string   `dynamodbav:"created_at"`
}

func policyKey(companyID, policyID int64) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: fmt.Sprintf("POLICY#%012d", policyID)}
}

// CreatePolicy stores a new policy with the next policy id.
func (s *Store) CreatePolicy(ctx context.Context, p Policy) (Policy, error) {
	id, err := s.NextID(ctx, "policy")
	if err != nil {
		return Policy{}, err
	}
	p.ID = id
	p.Key = policyKey(p.CompanyID, id)
	if p.CreatedAt == "" {
		p.CreatedAt = s.t.Stamp()
	}
	item, err := s.t.TxPutNew(p)
	if err != nil {
		return Policy{}, err
	}
	counted, err := s.l.TxCount(p.CompanyID, policyCount, 1)
	if err != nil {
		return Policy{}, err
	}
	audit, err := s.l.TxAudit(ctx, p.CompanyID, AuditEntry{
		Action: "policy.create", TargetType: "policy", TargetID: strconv.FormatInt(id, 10),
		Changes: map[string]Change{"name": {After: p.Name}, "policy_type": {After: p.PolicyType}, "active": {After: p.Active}},
	})
	if err != nil {
		return Policy{}, err
	}
	return p, s.t.Transact(ctx, append([]types.TransactWriteItem{item, counted}, audit...))
}

// GetPolicy reads a policy of a company.
func (s *Store) GetPolicy(ctx context.Context, companyID, policyID int64) (Policy, error) {
	var p Policy
	err := s.t.GetItem(ctx, policyKey(companyID, policyID), &p)
	return p, err
}

// DeactivatePolicy sets active to false in one conditional write (in a
// transaction with its audit entry) and returns the record; an already
// inactive policy comes back unchanged. ErrNotFound when the company has no
// such policy.
func (s *Store) DeactivatePolicy(ctx context.Context, companyID, policyID int64) (Policy, error) {
	var p Policy
	if err := s.t.GetItemConsistent(ctx, policyKey(companyID, policyID), &p); err != nil || !p.Active {
		return p, err
	}
	upd := expression.Set(expression.Name("active"), expression.Value(false))
	cond := expression.Name("active").Equal(expression.Value(true))
	item, err := s.t.TxUpdate(p.Key, upd, &cond)
	if err != nil {
		return Policy{}, err
	}
	audit, err := s.l.TxAudit(ctx, companyID, AuditEntry{
		Action: "policy.deactivate", TargetType: "policy", TargetID: strconv.FormatInt(policyID, 10),
		Changes: map[string]Change{"active": {Before: true, After: false}},
	})
	if err != nil {
		return Policy{}, err
	}
	p.Active = false
	err = s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...))
	if errors.Is(err, ErrConflict) {
		return p, nil // deactivated meanwhile
	}
	return p, err
}
