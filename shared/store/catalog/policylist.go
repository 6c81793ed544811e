package catalog

import (
	"context"

	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// policyCount counts a company's policies (kept by CreatePolicy).
const policyCount = "POLICIES"

// ListPolicies reads one page of a company's policies by id, with the
// company's total.
func (s *Catalog) ListPolicies(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.Policy], error) {
	l := page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(schema.PolicySKPrefix), Forward: true}
	return counted.Page[schema.Policy](ctx, s.t, s.l, companyID, l, q, policyCount)
}
