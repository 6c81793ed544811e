package store

import (
	"context"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
)

// EachQualityIssue calls fn with every quality finding of a company (as
// EachIssue, for checks).
func (s *Store) EachQualityIssue(ctx context.Context, companyID int64, fn func(QualityIssue) error) error {
	return ddb.Each(ctx, s.t, ddb.PKBeginsWith(schema.CompanyPK(companyID), "QI#"), fn)
}

// EachSCAIssue calls fn with every SCA finding of a company (as EachIssue,
// for checks).
func (s *Store) EachSCAIssue(ctx context.Context, companyID int64, fn func(SCAIssue) error) error {
	return ddb.Each(ctx, s.t, ddb.PKBeginsWith(schema.CompanyPK(companyID), "SCA#"), fn)
}
