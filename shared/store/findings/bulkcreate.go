package findings

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/tabledef"
)

// A scan's new issues are written in bulk, not one transaction per handful
// of issues: their counter deltas are added up over the whole scan and
// written first as a journal (items of up to journalChunk counters' deltas
// each, then a marker), then the issues go out with parallel
// BatchWriteItem calls while each journal item is applied to its counters
// (ADD) and deleted in one transaction. So each counter is written once per
// scan, however many issues it gains, and a crash anywhere leaves a state
// the next attempt finishes exactly: before the marker nothing counts;
// after it, the journal, not the issues, says what the counters still owe,
// and an applied item is gone. Only the scan's lease holder creates issues
// on its branch and tool, so a retry's "issues that do not exist yet" are
// exactly the first attempt's unwritten ones. A journal item holds many
// counters because every item written costs a stream record as well: one
// per counter would double the journal's writes for nothing.

func journalPK(companyID int64, scanID string) string {
	return fmt.Sprintf("%s#JRNL#%s", schema.CompanyPK(companyID), scanID)
}

// journalDone is the marker's sort key: after every chunk key (CHUNK#...).
const journalDone = "~DONE"

// journalChunk is the most counters one journal item holds: with the
// item's own delete and the summaries of the three scopes of a scan's
// issues (company, project, branch), one transaction applies it. An entry
// (the counter's scope, dimension and group, from which its key is made
// again, and its deltas) is at most some 2.5 KB (a file path of
// norm.MaxPath bytes and a branch of 1,020), so an item stays under 250 KB,
// below DynamoDB's 400 KB.
const journalChunk = ddb.MaxTxItems - 4

// journalItem is one chunk of a scan's counter deltas.
type journalItem struct {
	ddb.Key
	Entries []journalEntry `dynamodbav:"entries"`
	Trend   []trends.Move  `dynamodbav:"trend,omitempty"` // the trend item's (trendJournalSK)
}

type journalEntry struct {
	Project int64     `dynamodbav:"scope_project"`
	Branch  string    `dynamodbav:"scope_branch"`
	Dim     Dimension `dynamodbav:"dim"`
	Group   string    `dynamodbav:"group"`
	Cells   Cells     `dynamodbav:"cells"`
}

// bulkCreate writes new issues (changes without before) and counts them;
// it adds the counters it settled to settled.
func (x *Findings) bulkCreate(ctx context.Context, companyID int64, scanID string, creates []IssueChange, settled map[ddb.Key]bool) error {
	pk := journalPK(companyID, scanID)
	var marker ddb.Key
	err := x.t.GetItem(ctx, ddb.Key{PK: pk, SK: journalDone}, &marker)
	switch {
	case errors.Is(err, ddb.ErrNotFound) && len(creates) == 0:
		return nil // nothing to create, nothing owed
	case errors.Is(err, ddb.ErrNotFound):
		if err := x.writeJournal(ctx, companyID, pk, creates); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if err := x.settleTerms(ctx, companyID, creates, x.t.Stamp()); err != nil {
		return err
	}
	items := make([]any, 0, len(creates))
	for _, c := range creates {
		c.After.Version = 1
		if err := c.After.SetDue(nil); err != nil {
			return err
		}
		items = append(items, c.After)
		if c.historyEntry() { // a triage rule acted at first detection: a retry writes the same entry
			items = append(items, NewHistory(companyID, c, c.After.CreatedAt, 0))
		}
	}
	// The issues and the counters go out together: the journal, not the
	// issues written, says what the counters owe, so neither order matters
	// to a retry, and the counters' transactions ride beside the issues'
	// batches instead of after them.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return x.t.BatchPutParallel(gctx, items) })
	g.Go(func() error { return x.applyJournal(gctx, companyID, pk, settled) })
	if err := g.Wait(); err != nil {
		return err
	}
	// Paid in full: a later apply of the scan journals afresh.
	return x.t.DeleteItem(ctx, ddb.Key{PK: pk, SK: journalDone})
}

func (x *Findings) writeJournal(ctx context.Context, companyID int64, pk string, creates []IssueChange) error {
	var entries []journalEntry
	for _, d := range counterDeltas(companyID, creates) {
		entries = append(entries, journalEntry{Project: d.scope.ProjectID,
			Branch: d.scope.Branch, Dim: d.dim, Group: d.group, Cells: d.cells})
	}
	var items []any
	for start := 0; start < len(entries); start += journalChunk {
		items = append(items, journalItem{Key: ddb.Key{PK: pk, SK: fmt.Sprintf("CHUNK#%06d", start/journalChunk)},
			Entries: entries[start:min(start+journalChunk, len(entries))]})
	}
	if tj, err := x.trendJournal(ctx, companyID, pk, creates); err != nil {
		return err
	} else if tj != nil {
		items = append(items, *tj)
	}
	if err := x.t.BatchPutParallel(ctx, items); err != nil {
		return err
	}
	return x.t.PutItem(ctx, ddb.Key{PK: pk, SK: journalDone}, nil)
}

// applyJournal adds every remaining journal item to its counters,
// deleting the item in the same transaction. It first reads the item's
// counters and settles them in that transaction too (index keys and scope
// summaries for the counts the deltas make, conditional on the counters
// read), which spares settleCounters a second write of each; when a
// concurrent writer moved one of them meanwhile, the item is applied with
// plain ADDs and settleCounters settles them as it does for every writer.
// Chunks go one after another: they share their scopes' summaries. The
// counters settled so are added to settled.
func (x *Findings) applyJournal(ctx context.Context, companyID int64, pk string, settled map[ddb.Key]bool) error {
	var chunks []journalItem
	if err := x.t.QueryAll(ctx, "", ddb.PKBeginsWith(pk, "CHUNK#"), true, &chunks); err != nil {
		return err
	}
	exists := expression.AttributeExists(expression.Name(tabledef.PK))
	for _, ch := range chunks {
		del, err := x.t.TxDelete(ch.Key, exists)
		if err != nil {
			return err
		}
		if ch.SK == trendJournalSK {
			if err := x.applyTrendJournal(ctx, companyID, ch, del); err != nil {
				return err
			}
			continue
		}
		keys := ch.counterKeys(companyID)
		err = x.applySettled(ctx, companyID, ch, keys, del)
		ok := err == nil
		if errors.Is(err, ddb.ErrConflict) {
			err = x.t.Retrying(ctx, func() error { return x.applyPlain(ctx, ch, keys, del) })
		}
		if err != nil {
			return err
		}
		for _, k := range keys {
			settled[k] = settled[k] || ok
		}
	}
	return nil
}

// ref names the counter a journal entry moves.
func (e journalEntry) ref() groupRef {
	return groupRef{scope: Scope{ProjectID: e.Project, Branch: e.Branch}, dim: e.Dim, group: e.Group}
}

func (e journalEntry) delta() *counterDelta {
	g := e.ref()
	return &counterDelta{scope: g.scope, dim: g.dim, group: g.group, cells: e.Cells}
}

// counterKeys are the keys of the counters a journal item moves, in the
// order of its entries.
func (ch journalItem) counterKeys(companyID int64) []ddb.Key {
	keys := make([]ddb.Key, len(ch.Entries))
	for n, e := range ch.Entries {
		keys[n] = e.ref().key(companyID)
	}
	return keys
}

// applyPlain adds a journal item's deltas to its counters (keys, as
// counterKeys) and deletes it.
func (x *Findings) applyPlain(ctx context.Context, ch journalItem, keys []ddb.Key, del types.TransactWriteItem) error {
	var items []types.TransactWriteItem
	for n, k := range keys {
		add, err := x.txCounter(k, ch.Entries[n].delta())
		if err != nil {
			return err
		}
		items = append(items, add)
	}
	return x.t.Transact(ctx, append(items, del))
}

// applySettled adds a journal item's deltas to its counters (keys, as
// counterKeys), settled for the counts read, and deletes it; ErrConflict
// when a counter moved since. The item's counters, its scopes' summaries
// (a scan's issues have three scopes) and its delete fit one transaction:
// see journalChunk.
func (x *Findings) applySettled(ctx context.Context, companyID int64, ch journalItem, keys []ddb.Key, del types.TransactWriteItem) error {
	got, err := x.t.BatchGet(ctx, keys)
	if err != nil {
		return err
	}
	var items []types.TransactWriteItem
	moves := groupMoves{}
	for n, e := range ch.Entries {
		var was counterState
		if av, ok := got[keys[n]]; ok {
			if was, err = decodeCounter(av); err != nil {
				return err
			}
		}
		d := e.delta()
		item, now, err := x.txCounterSettled(companyID, keys[n], d, was)
		if err != nil {
			return err
		}
		items = append(items, item)
		moves.add(d.scope, d.dim, was.indexed, now)
	}
	sums, err := x.txSummaries(companyID, moves)
	if err != nil {
		return err
	}
	return x.t.Transact(ctx, append(append(items, sums...), del))
}
