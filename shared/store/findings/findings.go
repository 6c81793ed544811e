// Package findings is the store's area of SAST findings: issues and the
// one write path every change to them takes (new, re-detected, fixed,
// triaged, deleted), which keeps the group counters, the scope summaries,
// the trend records, the due index, history and events exact in the same
// transactions; a scan's lifecycle under its branch lease; the
// decisions, triage rules and risk terms that act on issues as they are
// written. It builds on scans and catalog; issuelists reads what it
// writes.
package findings

import (
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/decisions"
	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/ledger"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/store/triagerules"
)

// Findings reads and writes issues.
type Findings struct {
	t *ddb.Table
	l *ledger.Ledger
	d Deps
}

// Deps are the areas the findings read while they write: a project's
// name, a scan, trend records, decisions and active triage rules.
type Deps struct {
	Catalog   *catalog.Catalog
	Scans     *scans.Scans
	Trends    *trends.Trends
	Decisions *decisions.Decisions
	Rules     *triagerules.TriageRules
}

// New returns the area on a table, its ledger and the areas it reads.
func New(t *ddb.Table, l *ledger.Ledger, d Deps) *Findings { return &Findings{t: t, l: l, d: d} }
