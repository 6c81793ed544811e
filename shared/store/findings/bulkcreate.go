package findings

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/journal"
	"github.com/acme/codescan-api/shared/store/internal/lease"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/trends"
)

// A scan's new issues are written in bulk, not one transaction per handful
// of issues: their counter deltas are added up over the whole scan and
// written first as the scan's journal (see internal/journal: items of up
// to journalChunk counters' deltas, the trend moves, and the new issues
// themselves in brief), then a marker naming it, which the branch's head
// names too. Then the issues go out, many to a transaction, and the
// journal is paid, every transaction fenced by the lease (fence.go). So
// each counter is written once per scan, however many issues it gains. Only the scan's lease holder
// creates issues on its branch and tool, so a retry within the same apply
// finds "the issues that do not exist yet" to be exactly the first
// attempt's unwritten ones, and finishes both. A journal whose writer gave
// up is settled (settle.go) by whoever takes the branch next, or by the
// scan's failure: what it paid for issues that were never written is taken
// back, so the counters equal the issues it wrote. A journal item holds
// many counters because every item written costs a stream record as well.

// journalChunk is the most counters one journal item holds: with the
// item's own delete, the summaries of the three scopes of a scan's issues
// (company, project, branch) and the lease's fence (fence.go), one
// transaction pays it. An entry
// (the counter's scope, dimension and group, from which its key is made
// again, and its deltas) is at most some 2.5 KB (a file path of
// norm.MaxPath bytes and a branch of 1,020), so an item stays under 250 KB,
// below DynamoDB's 400 KB.
const journalChunk = ddb.MaxTxItems - 4 - lease.FenceRoom

// errNoRoom is paySettled's answer for a chunk of a journal written before
// the fence took its room in the transaction: paid plainly instead.
var errNoRoom = errors.New("no room to settle the chunk as it is paid")

// The items of one generation of moves (a token of its own, so that
// items a crash left of another generation are never paid with it): its
// counter chunks and its trend item (their keys: schema.ScanJournalChunkPrefix,
// schema.ScanJournalTrendSK; see fixGen).

// journalMarker says a scan's journal is owed: Gen names its moves, Fixed
// says the moves that take back what Gen paid for issues never written
// (generation fixGen(Gen)) are written; At is when its issues were
// created, Brief how many items hold them in brief.
type journalMarker struct {
	ddb.Key
	Gen     string `dynamodbav:"gen"`
	Fixed   bool   `dynamodbav:"fixed,omitempty"`
	At      string `dynamodbav:"at"`
	Project int64  `dynamodbav:"project"`
	Branch  string `dynamodbav:"branch"`
	Brief   int    `dynamodbav:"brief"`
}

// journalRetention is how long a scan journal's items live. A journal is
// settled within hours (the stalled sweep fails every upload nothing
// completed two hours after it was made, settling its journal), so its
// items expire, at no write cost: those a writer wrote before dying
// without naming them, and the brief, which is not deleted when the
// journal is paid.
const journalRetention = 30 * 24 * time.Hour

type journalEntry struct {
	Project int64            `dynamodbav:"scope_project"`
	Branch  string           `dynamodbav:"scope_branch"`
	Dim     schema.Dimension `dynamodbav:"dim"`
	Group   string           `dynamodbav:"group"`
	Cells   Cells            `dynamodbav:"cells"`
}

// generation is the items of one generation of moves not paid yet.
type generation struct {
	chunks []journal.Item[journalEntry]
	trend  []journal.Item[trends.Move]
}

func (g generation) items() []any {
	out := make([]any, 0, len(g.chunks)+len(g.trend))
	for _, it := range g.chunks {
		out = append(out, it)
	}
	for _, it := range g.trend {
		out = append(out, it)
	}
	return out
}

func (g generation) keys() []ddb.Key {
	out := make([]ddb.Key, 0, len(g.chunks)+len(g.trend))
	for _, it := range g.chunks {
		out = append(out, it.Key)
	}
	for _, it := range g.trend {
		out = append(out, it.Key)
	}
	return out
}

// errCutOff marks a failure that cut concurrent writes off: some may
// still land (see lease.Grace).
var errCutOff = errors.New("writes cut off")

// bulkCreate writes new issues (changes without before) of the scan under
// the lease f and counts them; it adds the counters it settled to settled.
func (x *Findings) bulkCreate(ctx context.Context, companyID int64, sc scans.Scan, f lease.Fence, creates []IssueChange, settled map[ddb.Key]bool) error {
	pk := schema.ScanJournalPK(companyID, sc.ID)
	var m journalMarker
	var g generation
	err := x.t.GetItemConsistent(ctx, ddb.Key{PK: pk, SK: schema.ScanJournalDoneSK}, &m)
	switch {
	case errors.Is(err, ddb.ErrNotFound) && len(creates) == 0:
		return nil // nothing to create, nothing owed
	case errors.Is(err, ddb.ErrNotFound), err == nil && m.Gen == "": // none, or one an earlier version left
		if m, g, err = x.writeJournal(ctx, companyID, sc, f, creates); err != nil {
			return err
		}
	case err != nil:
		return err
	default: // an earlier attempt of this apply journaled: what it left
		if g, err = x.readGeneration(ctx, pk, m.Gen); err != nil {
			return err
		}
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
	if err := x.payGeneration(ctx, companyID, g, settled); err != nil {
		return fmt.Errorf("%w: %w", errCutOff, err)
	}
	// Paid in full: a later apply of the scan journals afresh.
	return lease.WriteAll(ctx, x.t, []any{m.Key})
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

// writeJournal writes the journal of creates and its marker, and names it
// on the branch's head, conditional on the scan still holding its lease
// f; it returns the marker and the generation to pay. The items go out in
// batches, unfenced: a late one cannot move a count, as only the marker
// names their generation (see fence.go).
func (x *Findings) writeJournal(ctx context.Context, companyID int64, sc scans.Scan, f lease.Fence, creates []IssueChange) (journalMarker, generation, error) {
	pk := schema.ScanJournalPK(companyID, sc.ID)
	m := journalMarker{Key: ddb.Key{PK: pk, SK: schema.ScanJournalDoneSK}, Gen: uuid.NewString(), At: x.t.Stamp(),
		Project: sc.ProjectID, Branch: sc.Branch}
	expires := x.t.Clock().Add(journalRetention).Unix()
	g, err := x.newGeneration(ctx, companyID, pk, m.Gen, creates, m.At, false, expires)
	if err != nil {
		return m, g, err
	}
	items := g.items()
	brief, err := briefItems(pk, m.Gen, creates, expires)
	if err != nil {
		return m, g, err
	}
	for _, it := range brief {
		items = append(items, it)
	}
	m.Brief = len(brief)
	if err := x.t.BatchPutParallel(ctx, items); err != nil {
		return m, g, err
	}
	put, err := x.t.TxPut(m, nil)
	if err != nil {
		return m, g, err
	}
	cond := f.Cond() // the head's own condition: a transaction writes an item once
	head, err := x.t.TxUpdate(f.Key, expression.Set(expression.Name("journal"), expression.Value(sc.ID)), &cond)
	if err != nil {
		return m, g, err
	}
	return m, g, lease.Refused(lease.WithFence(ctx, f), x.t.Transact(ctx, []types.TransactWriteItem{put, head}), 1)
}

// newGeneration is generation gen of a journal: what changes written at
// at move, or, reversed, what takes that back.
func (x *Findings) newGeneration(ctx context.Context, companyID int64, pk, gen string, changes []IssueChange, at string, reversed bool, expires int64) (generation, error) {
	var entries []journalEntry
	for _, d := range counterDeltas(companyID, changes) {
		if reversed {
			for c := range d.cells {
				d.cells[c] = -d.cells[c]
			}
		}
		entries = append(entries, journalEntry{Project: d.scope.ProjectID,
			Branch: d.scope.Branch, Dim: d.dim, Group: d.group, Cells: d.cells})
	}
	// In a fixed order, so that writing a generation again (fixGen) writes
	// the same items.
	slices.SortFunc(entries, func(a, b journalEntry) int {
		return cmp.Or(cmp.Compare(a.Project, b.Project), strings.Compare(a.Branch, b.Branch),
			strings.Compare(string(a.Dim), string(b.Dim)), strings.Compare(a.Group, b.Group))
	})
	g := generation{chunks: journal.Chunks(pk, schema.ScanJournalChunkPrefix(gen), entries, journalChunk, expires)}
	moves, err := x.trendMovesAt(ctx, companyID, changes, at)
	if err != nil {
		return g, err
	}
	if reversed {
		for n := range moves {
			moves[n] = moves[n].Reversed()
		}
	}
	if len(moves) > 0 {
		g.trend = []journal.Item[trends.Move]{{Key: ddb.Key{PK: pk, SK: schema.ScanJournalTrendSK(gen)}, Moves: moves, ExpiresAt: expires}}
	}
	return g, nil
}

// readGeneration reads what generation gen has not paid yet.
func (x *Findings) readGeneration(ctx context.Context, pk, gen string) (generation, error) {
	var g generation
	var err error
	if g.trend, err = journal.Pending[trends.Move](ctx, x.t, pk, schema.ScanJournalTrendSK(gen)); err != nil {
		return g, err
	}
	g.chunks, err = journal.Pending[journalEntry](ctx, x.t, pk, schema.ScanJournalChunkPrefix(gen))
	return g, err
}

// payGeneration pays every item of g. It first reads a chunk's counters
// and settles them in the same transaction (index keys and scope
// summaries for the counts the deltas make, conditional on the counters
// read), which spares settleCounters a second write of each; when a
// concurrent writer moved one of them meanwhile, the chunk is paid with
// plain ADDs and settleCounters settles them as it does for every writer.
// Chunks go one after another: they share their scopes' summaries. It
// records in settled whether each counter's payment settled it (the last
// payment decides).
func (x *Findings) payGeneration(ctx context.Context, companyID int64, g generation, settled map[ddb.Key]bool) error {
	for _, it := range g.trend {
		items, err := x.d.Trends.TxMoves(companyID, it.Moves)
		if err != nil {
			return err
		}
		if err := x.pay(ctx, []ddb.Key{it.Key}, items); err != nil {
			return err
		}
	}
	for _, ch := range g.chunks {
		keys := counterKeys(companyID, ch.Moves)
		err := x.paySettled(ctx, companyID, ch, keys)
		ok := err == nil
		if errors.Is(err, ddb.ErrConflict) || errors.Is(err, errNoRoom) {
			err = x.t.Retrying(ctx, func() error { return x.payPlain(ctx, ch, keys) })
		}
		if err != nil {
			return err
		}
		for _, k := range keys {
			settled[k] = ok
		}
	}
	return nil
}

// ref names the counter a journal entry moves.
func (e journalEntry) ref() groupRef {
	return groupRef{scope: schema.Scope{ProjectID: e.Project, Branch: e.Branch}, dim: e.Dim, group: e.Group}
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
	return x.pay(ctx, []ddb.Key{ch.Key}, items)
}

// paySettled pays a chunk to its counters (keys, as counterKeys), settled
// for the counts read; ErrConflict when a counter moved since. The chunk's
// counters, its scopes' summaries (a scan's issues have three scopes) and
// its delete fit one transaction: see journalChunk; errNoRoom when they
// do not (with the fence), to be paid plainly.
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
	if len(items)+len(sums)+1+lease.FenceRoom > ddb.MaxTxItems { // a chunk written before the fence took its room
		return errNoRoom
	}
	return x.pay(ctx, []ddb.Key{ch.Key}, append(items, sums...))
}
