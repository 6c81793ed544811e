// Package findings is the store's area of SAST findings: issues and the
// one write path every change to them takes (new, re-detected, fixed,
// triaged, deleted), which keeps the group counters, the scope summaries,
// the trend records, the due index, history and events exact in the same
// transactions; a scan's lifecycle under its branch lease; the
// decisions, triage rules and risk terms that act on issues as they are
// written. A scan's new issues go out under its journal
// (internal/scanjournal), which moves their counters through this area.
// It builds on scans and catalog (what completing a scan writes is the scans
// area's CompletionItems, appended to the last transaction of its apply);
// issuelists reads what it writes.
package findings

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/scanjournal"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// Findings reads and writes issues.
type Findings struct {
	t       *ddb.Table
	l       *ledger.Ledger
	d       Deps
	journal *scanjournal.Journal
}

// Deps are what the findings need of other areas while they write: a
// scan's completion (the scans area builds what it writes, ApplyScan
// appends it to its last transaction), trend moves, decisions and active
// triage rules.
type Deps struct {
	Completion interface {
		CompletionItems(ctx context.Context, sc scans.Scan, done scans.Applied) ([]types.TransactWriteItem, error)
	}
	Trends interface {
		TxMoves(companyID int64, moves []trends.Move) ([]types.TransactWriteItem, error)
	}
	Decisions interface {
		ToolDecisions(ctx context.Context, companyID, projectID int64, tool string) (map[string]schema.Decision, error)
		// CatchUp brings the scan's issues that took (or would have
		// taken) the project's decisions in line with them as they now are.
		CatchUp(ctx context.Context, companyID int64, sc scans.Scan, takers []Issue) error
	}
	Rules interface {
		ActiveTriageRules(ctx context.Context, companyID, projectID int64) ([]triagemodel.Rule, error)
	}
}

// New returns the area on a table, its ledger and the areas it reads.
func New(t *ddb.Table, l *ledger.Ledger, d Deps) *Findings {
	x := &Findings{t: t, l: l, d: d}
	x.journal = scanjournal.New(t, journalPort{x}, d.Trends)
	return x
}
