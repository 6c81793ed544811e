package scanjournal

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

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

// errNoRoom is paySettled's answer for a chunk of a journal written before
// the fence took its room in the transaction: paid plainly instead.
var errNoRoom = errors.New("no room to settle the chunk as it is paid")

// The items of one generation of moves (a token of its own, so that
// items a crash left of another generation are never paid with it): its
// counter chunks and its trend item (their keys: schema.ScanJournalChunkPrefix,
// schema.ScanJournalTrendSK; see fixGen).

// marker says a scan's journal is owed: Gen names its moves, Fixed says
// the moves that take back what Gen paid for issues never written
// (generation fixGen(Gen)) are written; At is when its issues were
// created, Brief how many items hold them in brief.
type marker struct {
	ddb.Key
	Gen     string `dynamodbav:"gen"`
	Fixed   bool   `dynamodbav:"fixed,omitempty"`
	At      string `dynamodbav:"at"`
	Project int64  `dynamodbav:"project"`
	Branch  string `dynamodbav:"branch"`
	Brief   int    `dynamodbav:"brief"`
}

// generation is the items of one generation of moves not paid yet.
type generation struct {
	chunks []journal.Item[Entry]
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

// Owed is a scan's journal, written, that its writer pays once the issues
// it journals are written.
type Owed struct {
	companyID int64
	m         marker
	g         generation
}

// Open journals the new issues of the scan that holds the lease f on its
// branch, unless an earlier attempt of the same apply did (then it
// returns what that one left to pay); nil when there is nothing to create
// and nothing owed. Its writer then writes the issues, fenced, and pays.
func (j *Journal) Open(ctx context.Context, companyID int64, sc scans.Scan, f lease.Fence, creates []Created) (*Owed, error) {
	pk := schema.ScanJournalPK(companyID, sc.ID)
	o := &Owed{companyID: companyID}
	err := j.t.GetItemConsistent(ctx, ddb.Key{PK: pk, SK: schema.ScanJournalDoneSK}, &o.m)
	switch {
	case errors.Is(err, ddb.ErrNotFound) && len(creates) == 0:
		return nil, nil // nothing to create, nothing owed
	case errors.Is(err, ddb.ErrNotFound), err == nil && o.m.Gen == "": // none, or one an earlier version left
		o.m, o.g, err = j.write(ctx, companyID, sc, f, creates)
	case err != nil:
	default: // an earlier attempt of this apply journaled: what it left
		o.g, err = j.readGeneration(ctx, pk, o.m.Gen)
	}
	if err != nil {
		return nil, err
	}
	return o, nil
}

// Pay pays what o owes, fenced, recording in settled whether each
// counter's payment settled it (the last payment decides).
func (j *Journal) Pay(ctx context.Context, o *Owed, settled map[ddb.Key]bool) error {
	return j.payGeneration(ctx, o.companyID, o.g, settled)
}

// Close deletes o's marker once it is paid in full: a later apply of the
// scan journals afresh.
func (j *Journal) Close(ctx context.Context, o *Owed) error {
	return lease.WriteAll(ctx, j.t, []any{o.m.Key})
}

// write writes the journal of creates and its marker, and names it on the
// branch's head, conditional on the scan still holding its lease f; it
// returns the marker and the generation to pay. The items go out in
// batches, unfenced: a late one cannot move a count, as only the marker
// names their generation (see internal/lease).
func (j *Journal) write(ctx context.Context, companyID int64, sc scans.Scan, f lease.Fence, creates []Created) (marker, generation, error) {
	pk := schema.ScanJournalPK(companyID, sc.ID)
	m := marker{Key: ddb.Key{PK: pk, SK: schema.ScanJournalDoneSK}, Gen: uuid.NewString(), At: j.t.Stamp(),
		Project: sc.ProjectID, Branch: sc.Branch}
	expires := j.t.Clock().Add(retention).Unix()
	g, err := j.newGeneration(ctx, companyID, pk, m.Gen, creates, m.At, false, expires)
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
	if err := j.t.BatchPutParallel(ctx, items); err != nil {
		return m, g, err
	}
	put, err := j.t.TxPut(m, nil)
	if err != nil {
		return m, g, err
	}
	cond := f.Cond() // the head's own condition: a transaction writes an item once
	head, err := j.t.TxUpdate(f.Key, expression.Set(expression.Name("journal"), expression.Value(sc.ID)), &cond)
	if err != nil {
		return m, g, err
	}
	return m, g, lease.Refused(lease.WithFence(ctx, f), j.t.Transact(ctx, []types.TransactWriteItem{put, head}), 1)
}

// newGeneration is generation gen of a journal: what creating issues at
// at moves, or, reversed, what takes that back.
func (j *Journal) newGeneration(ctx context.Context, companyID int64, pk, gen string, created []Created, at string, reversed bool, expires int64) (generation, error) {
	mv, err := j.issues.Moves(ctx, companyID, created, at)
	if err != nil {
		return generation{}, err
	}
	entries, moves := mv.Counters, mv.Trend
	if reversed {
		for _, e := range entries {
			for c := range e.Cells {
				e.Cells[c] = -e.Cells[c]
			}
		}
		for n := range moves {
			moves[n] = moves[n].Reversed()
		}
	}
	// In a fixed order, so that writing a generation again (fixGen) writes
	// the same items.
	slices.SortFunc(entries, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(a.Project, b.Project), strings.Compare(a.Branch, b.Branch),
			strings.Compare(string(a.Dim), string(b.Dim)), strings.Compare(a.Group, b.Group))
	})
	g := generation{chunks: journal.Chunks(pk, schema.ScanJournalChunkPrefix(gen), entries, chunkSize, expires)}
	if len(moves) > 0 {
		g.trend = []journal.Item[trends.Move]{{Key: ddb.Key{PK: pk, SK: schema.ScanJournalTrendSK(gen)}, Moves: moves, ExpiresAt: expires}}
	}
	return g, nil
}

// readGeneration reads what generation gen has not paid yet.
func (j *Journal) readGeneration(ctx context.Context, pk, gen string) (generation, error) {
	var g generation
	var err error
	if g.trend, err = journal.Pending[trends.Move](ctx, j.t, pk, schema.ScanJournalTrendSK(gen)); err != nil {
		return g, err
	}
	g.chunks, err = journal.Pending[Entry](ctx, j.t, pk, schema.ScanJournalChunkPrefix(gen))
	return g, err
}

// payGeneration pays every item of g. It first reads a chunk's counters
// and settles them in the same transaction (index keys and scope
// summaries for the counts the deltas make, conditional on the counters
// read), which spares SettleCounters a second write of each; when a
// concurrent writer moved one of them meanwhile, the chunk is paid with
// plain ADDs and SettleCounters settles them as it does for every writer.
// Chunks go one after another: they share their scopes' summaries. It
// records in settled whether each counter's payment settled it (the last
// payment decides).
func (j *Journal) payGeneration(ctx context.Context, companyID int64, g generation, settled map[ddb.Key]bool) error {
	for _, it := range g.trend {
		items, err := j.trends.TxMoves(companyID, it.Moves)
		if err != nil {
			return err
		}
		if err := j.pay(ctx, []ddb.Key{it.Key}, items); err != nil {
			return err
		}
	}
	for _, ch := range g.chunks {
		keys := counterKeys(companyID, ch.Moves)
		err := j.paySettled(ctx, companyID, ch, keys)
		ok := err == nil
		if errors.Is(err, ddb.ErrConflict) || errors.Is(err, errNoRoom) {
			err = j.t.Retrying(ctx, func() error { return j.payPlain(ctx, ch, keys) })
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

// counterKeys are the keys of the counters entries move, in their order.
func counterKeys(companyID int64, entries []Entry) []ddb.Key {
	keys := make([]ddb.Key, len(entries))
	for n, e := range entries {
		keys[n] = e.Key(companyID)
	}
	return keys
}

// payPlain pays a chunk with plain ADDs to its counters (keys, as
// counterKeys).
func (j *Journal) payPlain(ctx context.Context, ch journal.Item[Entry], keys []ddb.Key) error {
	items, err := j.issues.TxPayPlain(ch.Moves, keys)
	if err != nil {
		return err
	}
	return j.pay(ctx, []ddb.Key{ch.Key}, items)
}

// paySettled pays a chunk to its counters (keys, as counterKeys), settled
// for the counts read; ErrConflict when a counter moved since. The chunk's
// counters, its scopes' summaries (a scan's issues have three scopes) and
// its delete fit one transaction: see chunkSize; errNoRoom when they do
// not (with the fence), to be paid plainly.
func (j *Journal) paySettled(ctx context.Context, companyID int64, ch journal.Item[Entry], keys []ddb.Key) error {
	items, err := j.issues.TxPaySettled(ctx, companyID, ch.Moves, keys)
	if err != nil {
		return err
	}
	if len(items)+1+lease.FenceRoom > ddb.MaxTxItems { // a chunk written before the fence took its room
		return errNoRoom
	}
	return j.pay(ctx, []ddb.Key{ch.Key}, items)
}

// pay pays journal items (see journal.Pay), fenced under a lease: the
// check goes last among the moves, before the deletes journal.Pay adds.
func (j *Journal) pay(ctx context.Context, paid []ddb.Key, moves []types.TransactWriteItem) error {
	moves, at, err := lease.Fenced(ctx, j.t, moves)
	if err != nil {
		return err
	}
	return lease.Refused(ctx, journal.Pay(ctx, j.t, paid, moves), at)
}
