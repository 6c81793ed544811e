// Package delivery is the store's area of telling people: deliveries of
// outbox events (their claims, retries and attempt log), webhook endpoints
// and notification settings.
package delivery

import (
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
)

// Deliveries reads and writes the area's items of one table.
type Deliveries struct {
	t *ddb.Table
	l *ledger.Ledger
}

// New returns the area on a table and its ledger.
func New(t *ddb.Table, l *ledger.Ledger) *Deliveries { return &Deliveries{t: t, l: l} }
