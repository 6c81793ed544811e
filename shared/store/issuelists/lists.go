// Package issuelists is the store's read side of findings: the issue
// list and its drill-downs (by group, CWE, file, scope, filters, accepted
// risks ending), the group counts and pages, a scan's issue pages, an
// issue's history, the due index's reads and the trend window; and the
// backfill of the index keys these lists read by. It reads what findings
// writes; triage builds on it.
package issuelists

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/store/trends"
)

// Lists reads issues and their counts.
type Lists struct {
	t           *ddb.Table
	f           *findings.Findings
	scans       *scans.Scans
	catalog     *catalog.Catalog
	tenancy     *tenancy.Tenancy
	trends      *trends.Trends
	acceptances Acceptances
}

// Acceptances is what the lists read of risk acceptances (the triage
// room's): the keys of a company's accepted risks whose end is before t,
// soonest end first, a page at a time.
type Acceptances interface {
	EachEndingBefore(ctx context.Context, companyID int64, t time.Time, fn func([]ddb.Key) error) error
}

// New returns the area on a table and the areas it reads: the findings,
// scans, SLA settings (catalog), the companies (the backfill), trend
// records and risk acceptances.
func New(t *ddb.Table, f *findings.Findings, sc *scans.Scans, c *catalog.Catalog, tn *tenancy.Tenancy, tr *trends.Trends, a Acceptances) *Lists {
	return &Lists{t: t, f: f, scans: sc, catalog: c, tenancy: tn, trends: tr, acceptances: a}
}
