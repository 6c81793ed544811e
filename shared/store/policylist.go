package store

import (
	"context"

	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
)

// policyCount counts a company's policies (kept by CreatePolicy).
const policyCount = "POLICIES"

// PolicyPage is a page of policies by id, with the company's total.
type PolicyPage struct {
	Policies  []Policy
	Total     int
	NextToken string
}

// ListPolicies reads one page of a company's policies by id.
func (s *Store) ListPolicies(ctx context.Context, companyID int64, token string, skip, take int) (PolicyPage, error) {
	items, next, err := s.window(ctx, Window{Partition: schema.CompanyPK(companyID), SKPrefix: "POLICY#", Forward: true, Token: token, Offset: skip, Take: take})
	if err != nil {
		return PolicyPage{}, err
	}
	page := PolicyPage{NextToken: next}
	if err := attributevalue.UnmarshalListOfMaps(items, &page.Policies); err != nil {
		return PolicyPage{}, err
	}
	page.Total, err = s.l.CompanyCount(ctx, companyID, policyCount)
	return page, err
}
