package store

import (
	"context"
	"fmt"

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
	return Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("POLICY#%012d", policyID)}
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
		p.CreatedAt = now()
	}
	item, err := s.txPutNew(p)
	if err != nil {
		return Policy{}, err
	}
	counted, err := s.txCount(p.CompanyID, policyCount, 1)
	if err != nil {
		return Policy{}, err
	}
	return p, s.transact(ctx, []types.TransactWriteItem{item, counted})
}

// GetPolicy reads a policy of a company.
func (s *Store) GetPolicy(ctx context.Context, companyID, policyID int64) (Policy, error) {
	var p Policy
	err := s.getItem(ctx, policyKey(companyID, policyID), &p)
	return p, err
}

// DeactivatePolicy sets active to false in one conditional write and returns
// the record; an already inactive policy comes back unchanged. ErrNotFound
// when the company has no such policy.
func (s *Store) DeactivatePolicy(ctx context.Context, companyID, policyID int64) (Policy, error) {
	var p Policy
	upd := expression.Set(expression.Name("active"), expression.Value(false))
	err := s.update(ctx, policyKey(companyID, policyID), upd, nil, &p)
	return p, err
}
