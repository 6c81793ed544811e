package findings

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/lease"
	"github.com/acme/codescan-api/shared/store/internal/scanjournal"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// A scan's new issues go out in bulk under its journal (see
// internal/scanjournal): journaled first, then written, fenced, then the
// journal is paid. This file is what the journal needs of the issues
// (journalPort) and the two places the lifecycle uses it.

// errCutOff marks a failure that cut concurrent writes off: some may
// still land (see lease.Grace).
var errCutOff = errors.New("writes cut off")

// bulkCreate writes new issues (changes without before) of the scan under
// the lease f and counts them; it adds the counters it settled to settled.
func (x *Findings) bulkCreate(ctx context.Context, companyID int64, sc scans.Scan, f lease.Fence, creates []IssueChange, settled map[ddb.Key]bool) error {
	brief := make([]scanjournal.Created, len(creates))
	for n, c := range creates {
		brief[n] = inBrief(c.After)
	}
	owed, err := x.journal.Open(ctx, companyID, sc, f, brief)
	if err != nil || owed == nil {
		return err
	}
	items, err := x.createItems(ctx, companyID, creates)
	if err != nil {
		return err
	}
	// The journal, not the issues written, says what the counters owe, and
	// what it paid for issues a writer that gave up never wrote is taken
	// back when it is settled. That settlement decides from the issues that
	// exist then, so an issue written after it (by a holder frozen past its
	// lease) would stay uncounted, or overwrite one counted as another
	// scan left it: the issues go out in fenced transactions, not in
	// batches, and so does the journal's payment. One after the other:
	// transactions that check the head at the same time conflict.
	if err := lease.WriteAll(ctx, x.t, items); err != nil {
		return fmt.Errorf("%w: %w", errCutOff, err)
	}
	if err := x.journal.Pay(ctx, owed, settled); err != nil {
		return fmt.Errorf("%w: %w", errCutOff, err)
	}
	return x.journal.Close(ctx, owed)
}

// createItems are the items that create the issues of creates: each
// issue, and the history entry of the decision (decidedEntry) or the rule
// that acted on it at first detection (the same entry on every attempt).
func (x *Findings) createItems(ctx context.Context, companyID int64, creates []IssueChange) ([]any, error) {
	items := make([]any, 0, len(creates))
	for _, c := range creates {
		if h, ok := decidedEntry(companyID, c); ok { // as the decision came, before its terms are settled
			items = append(items, h)
		}
	}
	if err := x.settleTerms(ctx, companyID, creates, x.t.Stamp()); err != nil {
		return nil, err
	}
	for _, c := range creates {
		c.After.Version = 1
		if err := c.After.SetDue(nil); err != nil {
			return nil, err
		}
		items = append(items, c.After)
		if c.historyEntry() {
			items = append(items, NewHistory(companyID, c, c.After.CreatedAt, 0))
		}
	}
	return items, nil
}

// inBrief is a new issue as its scan's journal keeps it.
func inBrief(i *Issue) scanjournal.Created {
	return scanjournal.Created{ID: i.ID, ProjectID: i.ProjectID, Branch: i.Branch, CWE: i.CWE, File: i.FilePath,
		Urgency: i.Urgency, Status: i.Status}
}

// fromBrief is the issue a journal's brief keeps, as far as it counts.
func fromBrief(c scanjournal.Created, at string) Issue {
	return Issue{ID: c.ID, ProjectID: c.ProjectID, Branch: c.Branch, CWE: c.CWE, FilePath: c.File,
		Urgency: c.Urgency, Status: c.Status, CreatedAt: at}
}

// journalPort is what the scan journal needs of the issues
// (scanjournal.Issues).
type journalPort struct{ x *Findings }

func (p journalPort) Moves(ctx context.Context, companyID int64, created []scanjournal.Created, at string) (scanjournal.Moves, error) {
	changes := make([]IssueChange, len(created))
	for n, c := range created {
		i := fromBrief(c, at)
		changes[n] = IssueChange{After: &i}
	}
	var mv scanjournal.Moves
	for _, d := range counterDeltas(companyID, changes) {
		mv.Counters = append(mv.Counters, scanjournal.Entry{Project: d.scope.ProjectID, Branch: d.scope.Branch,
			Dim: d.dim, Group: d.group, Cells: d.cells})
	}
	var err error
	mv.Trend, err = p.x.trendMovesAt(ctx, companyID, changes, at)
	return mv, err
}

func (p journalPort) Written(ctx context.Context, companyID int64, scanID string, ids []string) (map[string]bool, error) {
	got, err := p.x.issuesByID(ctx, companyID, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(got))
	for id, i := range got {
		out[id] = i.ScanID == scanID
	}
	return out, nil
}

func (journalPort) CounterKeys(companyID int64, created []scanjournal.Created) []ddb.Key {
	issues := make([]Issue, len(created))
	for n, c := range created {
		issues[n] = fromBrief(c, "")
	}
	return CounterKeys(companyID, issues)
}

func (p journalPort) TxPayPlain(entries []scanjournal.Entry, keys []ddb.Key) ([]types.TransactWriteItem, error) {
	items := make([]types.TransactWriteItem, 0, len(keys))
	for n, k := range keys {
		add, err := p.x.txCounter(k, entryDelta(entries[n]))
		if err != nil {
			return nil, err
		}
		items = append(items, add)
	}
	return items, nil
}

func (p journalPort) TxPaySettled(ctx context.Context, companyID int64, entries []scanjournal.Entry, keys []ddb.Key) ([]types.TransactWriteItem, error) {
	got, err := p.x.t.BatchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	var items []types.TransactWriteItem
	moves := groupMoves{}
	for n, e := range entries {
		var was counterState
		if av, ok := got[keys[n]]; ok {
			if was, err = decodeCounter(av); err != nil {
				return nil, err
			}
		}
		d := entryDelta(e)
		item, now, err := p.x.txCounterSettled(companyID, keys[n], d, was)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
		moves.add(d.scope, d.dim, was.indexed, now)
	}
	sums, err := p.x.txSummaries(companyID, moves)
	return append(items, sums...), err
}

func (p journalPort) SettleCounters(ctx context.Context, companyID int64, keys []ddb.Key) error {
	return p.x.settleCounters(ctx, companyID, keys)
}

// entryDelta is the counter delta a journal entry owes.
func entryDelta(e scanjournal.Entry) *counterDelta {
	return &counterDelta{scope: schema.Scope{ProjectID: e.Project, Branch: e.Branch}, dim: e.Dim, group: e.Group, cells: e.Cells}
}

// SettleScanJournal settles the journal of sc's issues when the
// branch's head still names it (its writer gave up midway), under the
// branch's lease, so that the counters equal the issues the scan wrote:
// what failing the scan does first (scanlife.Fail). A branch busy with
// another upload for longer than a lease wait answers ErrUnavailable, to
// be tried again.
func (x *Findings) SettleScanJournal(ctx context.Context, companyID int64, sc scans.Scan) error {
	var head ScanHead
	err := x.t.GetItemConsistent(ctx, headKey(companyID, sc.ProjectID, sc.Branch, sc.Tool), &head)
	if err != nil && !errors.Is(err, ddb.ErrNotFound) {
		return err
	}
	if head.Journal != sc.ID {
		return nil
	}
	_, f, err := x.takeLease(ctx, companyID, sc, sc.ID+"/fail/"+uuid.NewString())
	if err != nil {
		return err
	}
	lctx, stop := x.keepLease(ctx, companyID, sc, f.Owner)
	lctx = lease.WithFence(lctx, f) // its writes too (fence.go)
	err = x.journal.Settle(lctx, companyID, sc.ID)
	stop()
	x.releaseLease(ctx, companyID, sc, f.Owner, false) // a settlement that failed wrote nothing that matters late (scanjournal's fix generation)
	return lease.LostCause(lctx, err)
}
