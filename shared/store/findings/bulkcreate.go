package findings

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/journal"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/trends"
)

// A scan's new issues are written in bulk, not one transaction per handful
// of issues: their counter deltas are added up over the whole scan and
// written first as the scan's journal (see internal/journal: items of up
// to journalChunk counters' deltas, the trend moves, and the new issues
// themselves in brief), then a marker naming it, which the branch's head
// names too. Then the issues go out with parallel BatchWriteItem calls
// while the journal is paid beside them. So each counter is written once
// per scan, however many issues it gains. Only the scan's lease holder
// creates issues on its branch and tool, so a retry within the same apply
// finds "the issues that do not exist yet" to be exactly the first
// attempt's unwritten ones, and finishes both. A journal whose writer gave
// up is settled (settle.go) by whoever takes the branch next, or by the
// scan's failure: what it paid for issues that were never written is taken
// back, so the counters equal the issues it wrote. A journal item holds
// many counters because every item written costs a stream record as well.

func journalPK(companyID int64, scanID string) string {
	return fmt.Sprintf("%s#JRNL#%s", schema.CompanyPK(companyID), scanID)
}

// journalDone is the marker's sort key: after every other item's.
const journalDone = "~DONE"

// journalChunk is the most counters one journal item holds: with the
// item's own delete and the summaries of the three scopes of a scan's
// issues (company, project, branch), one transaction pays it. An entry
// (the counter's scope, dimension and group, from which its key is made
// again, and its deltas) is at most some 2.5 KB (a file path of
// norm.MaxPath bytes and a branch of 1,020), so an item stays under 250 KB,
// below DynamoDB's 400 KB.
const journalChunk = ddb.MaxTxItems - 4

// The items of one generation of moves (a token of its own, so that
// items a crash left of another generation are never paid with it): its
// counter chunks and its trend item. Each key ends the generation with
// "#", so no generation's prefix takes in another's (see fixGen).
func chunkPrefix(gen string) string { return "C#" + gen + "#" }
func trendSK(gen string) string     { return "T#" + gen + "#" }

// journalMarker says a scan's journal is owed: Gen names its moves, Fixed
// says the moves that take back what Gen paid for issues never written
// (generation fixGen(Gen)) are written; At is when its issues were
// created.
type journalMarker struct {
	ddb.Key
	Gen     string `dynamodbav:"gen"`
	Fixed   bool   `dynamodbav:"fixed,omitempty"`
	At      string `dynamodbav:"at"`
	Project int64  `dynamodbav:"project"`
	Branch  string `dynamodbav:"branch"`
}

type journalEntry struct {
	Project int64     `dynamodbav:"scope_project"`
	Branch  string    `dynamodbav:"scope_branch"`
	Dim     Dimension `dynamodbav:"dim"`
	Group   string    `dynamodbav:"group"`
	Cells   Cells     `dynamodbav:"cells"`
}

// bulkCreate writes new issues (changes without before) of the scan and
// counts them; it adds the counters it settled to settled.
func (x *Findings) bulkCreate(ctx context.Context, companyID int64, sc scans.Scan, lease string, creates []IssueChange, settled map[ddb.Key]bool) error {
	pk := journalPK(companyID, sc.ID)
	var m journalMarker
	err := x.t.GetItemConsistent(ctx, ddb.Key{PK: pk, SK: journalDone}, &m)
	switch {
	case errors.Is(err, ddb.ErrNotFound) && len(creates) == 0:
		return nil // nothing to create, nothing owed
	case errors.Is(err, ddb.ErrNotFound), err == nil && m.Gen == "": // none, or one an earlier version left
		if m, err = x.writeJournal(ctx, companyID, sc, lease, creates); err != nil {
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
	// issues written, says what the counters owe, and what it paid for
	// issues a writer that gave up never wrote is taken back when it is
	// settled; so the counters' transactions ride beside the issues'
	// batches instead of after them.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return x.t.BatchPutParallel(gctx, items) })
	g.Go(func() error { _, err := x.payJournal(gctx, companyID, pk, m.Gen, settled); return err })
	if err := g.Wait(); err != nil {
		return err
	}
	// Paid in full: a later apply of the scan journals afresh (the brief
	// of its new issues expires).
	return x.t.DeleteItem(ctx, m.Key)
}

// writeJournal writes the journal of creates and its marker, and names it
// on the branch's head, conditional on the scan still holding its lease.
func (x *Findings) writeJournal(ctx context.Context, companyID int64, sc scans.Scan, lease string, creates []IssueChange) (journalMarker, error) {
	pk := journalPK(companyID, sc.ID)
	m := journalMarker{Key: ddb.Key{PK: pk, SK: journalDone}, Gen: uuid.NewString(), At: x.t.Stamp(),
		Project: sc.ProjectID, Branch: sc.Branch}
	items, err := x.journalItems(ctx, companyID, pk, m.Gen, creates, m.At)
	if err != nil {
		return m, err
	}
	for _, it := range createdItems(pk, m.Gen, creates, x.t.Clock()) {
		items = append(items, it)
	}
	if err := x.t.BatchPutParallel(ctx, items); err != nil {
		return m, err
	}
	put, err := x.t.TxPut(m, nil)
	if err != nil {
		return m, err
	}
	cond := expression.Name("lease_owner").Equal(expression.Value(lease))
	head, err := x.t.TxUpdate(headKey(companyID, sc.ProjectID, sc.Branch, sc.Tool),
		expression.Set(expression.Name("journal"), expression.Value(sc.ID)), &cond)
	if err != nil {
		return m, err
	}
	return m, x.t.Transact(ctx, []types.TransactWriteItem{put, head})
}

// journalItems are the counter chunks and trend item of generation gen of
// a journal: what changes written at at move.
func (x *Findings) journalItems(ctx context.Context, companyID int64, pk, gen string, changes []IssueChange, at string) ([]any, error) {
	var entries []journalEntry
	for _, d := range counterDeltas(companyID, changes) {
		entries = append(entries, journalEntry{Project: d.scope.ProjectID,
			Branch: d.scope.Branch, Dim: d.dim, Group: d.group, Cells: d.cells})
	}
	// In a fixed order, so that writing a generation again (fixGen) writes
	// the same items.
	slices.SortFunc(entries, func(a, b journalEntry) int {
		return cmp.Or(cmp.Compare(a.Project, b.Project), strings.Compare(a.Branch, b.Branch),
			strings.Compare(string(a.Dim), string(b.Dim)), strings.Compare(a.Group, b.Group))
	})
	var items []any
	for _, it := range journal.Chunks(pk, chunkPrefix(gen), entries, journalChunk) {
		items = append(items, it)
	}
	moves, err := x.trendMovesAt(ctx, companyID, changes, at)
	if err != nil {
		return nil, err
	}
	if len(moves) > 0 {
		items = append(items, journal.Item[trends.Move]{Key: ddb.Key{PK: pk, SK: trendSK(gen)}, Moves: moves})
	}
	return items, nil
}

// payJournal pays every item of generation gen not paid yet. It first
// reads a chunk's counters and settles them in the same transaction
// (index keys and scope summaries for the counts the deltas make,
// conditional on the counters read), which spares settleCounters a second
// write of each; when a concurrent writer moved one of them meanwhile, the
// chunk is paid with plain ADDs and settleCounters settles them as it does
// for every writer. Chunks go one after another: they share their scopes'
// summaries. It returns the keys of the counters it moved, and adds those
// it settled to settled.
func (x *Findings) payJournal(ctx context.Context, companyID int64, pk, gen string, settled map[ddb.Key]bool) ([]ddb.Key, error) {
	trend, err := journal.Pending[trends.Move](ctx, x.t, pk, trendSK(gen))
	if err != nil {
		return nil, err
	}
	for _, it := range trend {
		items, err := x.d.Trends.TxMoves(companyID, it.Moves)
		if err != nil {
			return nil, err
		}
		if err := journal.Pay(ctx, x.t, []ddb.Key{it.Key}, items); err != nil {
			return nil, err
		}
	}
	chunks, err := journal.Pending[journalEntry](ctx, x.t, pk, chunkPrefix(gen))
	if err != nil {
		return nil, err
	}
	var moved []ddb.Key
	for _, ch := range chunks {
		keys := counterKeys(companyID, ch.Moves)
		err = x.paySettled(ctx, companyID, ch, keys)
		ok := err == nil
		if errors.Is(err, ddb.ErrConflict) {
			err = x.t.Retrying(ctx, func() error { return x.payPlain(ctx, ch, keys) })
		}
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			settled[k] = settled[k] || ok
		}
		moved = append(moved, keys...)
	}
	return moved, nil
}

// ref names the counter a journal entry moves.
func (e journalEntry) ref() groupRef {
	return groupRef{scope: Scope{ProjectID: e.Project, Branch: e.Branch}, dim: e.Dim, group: e.Group}
}

func (e journalEntry) delta() *counterDelta {
	g := e.ref()
	return &counterDelta{scope: g.scope, dim: g.dim, group: g.group, cells: e.Cells}
}

// counterKeys are the keys of the counters entries move, in their order.
func counterKeys(companyID int64, entries []journalEntry) []ddb.Key {
	keys := make([]ddb.Key, len(entries))
	for n, e := range entries {
		keys[n] = e.ref().key(companyID)
	}
	return keys
}

// payPlain pays a chunk with plain ADDs to its counters (keys, as
// counterKeys).
func (x *Findings) payPlain(ctx context.Context, ch journal.Item[journalEntry], keys []ddb.Key) error {
	var items []types.TransactWriteItem
	for n, k := range keys {
		add, err := x.txCounter(k, ch.Moves[n].delta())
		if err != nil {
			return err
		}
		items = append(items, add)
	}
	return journal.Pay(ctx, x.t, []ddb.Key{ch.Key}, items)
}

// paySettled pays a chunk to its counters (keys, as counterKeys), settled
// for the counts read; ErrConflict when a counter moved since. The chunk's
// counters, its scopes' summaries (a scan's issues have three scopes) and
// its delete fit one transaction: see journalChunk.
func (x *Findings) paySettled(ctx context.Context, companyID int64, ch journal.Item[journalEntry], keys []ddb.Key) error {
	got, err := x.t.BatchGet(ctx, keys)
	if err != nil {
		return err
	}
	var items []types.TransactWriteItem
	moves := groupMoves{}
	for n, e := range ch.Moves {
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
	return journal.Pay(ctx, x.t, []ddb.Key{ch.Key}, append(items, sums...))
}
