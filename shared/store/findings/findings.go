// Package findings is the store's area of SAST findings: issues and the
// one write path every change to them takes (new, re-detected, fixed,
// triaged, deleted), which keeps the group counters, the scope summaries,
// the trend records, the due index, history and events exact in the same
// transactions; a scan's lifecycle under its branch lease; the
// decisions, triage rules and risk terms that act on issues as they are
// written; and the reads of issues, groups and trends. It builds on scans
// and catalog; triage builds on it.
package findings

import (
	"sync/atomic"

	"github.com/acme/codescan-api/shared/store/acceptances"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/decisions"
	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/ledger"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/store/triagerules"
)

// Findings reads and writes issues.
type Findings struct {
	t *ddb.Table
	l *ledger.Ledger
	d Deps
	// issueKeys is set once every issue carries its Offset keys.
	issueKeys atomic.Bool
}

// Deps are the areas the findings read while they write: a project's
// name, a scan, the companies (backfills), trend records, decisions,
// active triage rules and risk acceptances.
type Deps struct {
	Catalog     *catalog.Catalog
	Scans       *scans.Scans
	Tenancy     *tenancy.Tenancy
	Trends      *trends.Trends
	Decisions   *decisions.Decisions
	Rules       *triagerules.TriageRules
	Acceptances *acceptances.Acceptances
}

// New returns the area on a table, its ledger and the areas it reads.
func New(t *ddb.Table, l *ledger.Ledger, d Deps) *Findings { return &Findings{t: t, l: l, d: d} }
