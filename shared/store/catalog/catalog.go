// Package catalog is the store's area of what a company sets up: projects
// (and the teams' counts of the projects they cover), teams, policies,
// blocking rule definitions, source-host integrations and SLA settings.
package catalog

import (
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
)

// PageResult is where a page of a list lies (see page.Result); the pages
// of the area embed it under this name.
type PageResult = page.Result

// Catalog reads and writes the area's items of one table.
type Catalog struct {
	t *ddb.Table
	l *ledger.Ledger
}

// New returns the area on a table and its ledger.
func New(t *ddb.Table, l *ledger.Ledger) *Catalog { return &Catalog{t: t, l: l} }
