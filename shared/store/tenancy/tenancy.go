// Package tenancy is the store's area of tenants and who acts for them:
// companies, users, API keys and token subjects (the credentials
// authentication resolves), rate-limit windows, the audit log's reads and
// Idempotency-Key records.
package tenancy

import (
	"context"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
)

// Tenancy reads and writes the area's items of one table.
type Tenancy struct {
	t *ddb.Table
	l *ledger.Ledger
}

// New returns the area on a table and its ledger.
func New(t *ddb.Table, l *ledger.Ledger) *Tenancy { return &Tenancy{t: t, l: l} }

// CompanyIDs returns every company id ever allocated (ids come from one
// counter, so this is 1..counter without reading any company), for the
// scheduled jobs that visit every company.
func (s *Tenancy) CompanyIDs(ctx context.Context) ([]int64, error) {
	n, err := s.l.LastID(ctx, "company")
	if err != nil || n == 0 {
		return nil, err
	}
	out := make([]int64, 0, n)
	for id := int64(1); id <= n; id++ {
		out = append(out, id)
	}
	return out, nil
}
