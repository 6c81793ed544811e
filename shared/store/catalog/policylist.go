package catalog

import (
	"context"

	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// policyCount counts a company's policies (kept by CreatePolicy).
const policyCount = "POLICIES"

// PolicyPage is a page of policies by id, with the company's total.
type PolicyPage struct {
	Policies []schema.Policy
	Total    int
	PageResult
}

// ListPolicies reads one page of a company's policies by id.
func (s *Catalog) ListPolicies(ctx context.Context, companyID int64, q page.Request) (PolicyPage, error) {
	var p PolicyPage
	var err error
	l := page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(schema.PolicySKPrefix), Forward: true}
	if p.PageResult, err = page.Read(ctx, s.t, l, q, &p.Policies); err != nil {
		return PolicyPage{}, err
	}
	p.Total, err = s.l.CompanyCount(ctx, companyID, policyCount)
	return p, err
}
