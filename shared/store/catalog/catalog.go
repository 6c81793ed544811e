// Package catalog is the store's area of what a company sets up: projects
// (and the teams' counts of the projects they cover), teams, policies,
// blocking rule definitions, source-host integrations and SLA settings;
// and the backfill of the projects' lower-cased URL the projects list's
// repo_url filter matches.
package catalog

import (
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
)

// Catalog reads and writes the area's items of one table.
type Catalog struct {
	t *ddb.Table
	l *ledger.Ledger
}

// New returns the area on a table and its ledger.
func New(t *ddb.Table, l *ledger.Ledger) *Catalog { return &Catalog{t: t, l: l} }
