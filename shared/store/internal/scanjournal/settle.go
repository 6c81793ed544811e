package scanjournal

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/lease"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Settling a scan's journal. Its writer pays the journal while it writes
// the issues, so a writer that gives up midway (a crash, every retry
// failed) can leave counters paid for issues it never wrote, and others
// not yet paid. The journal keeps its new issues in brief (id, file, CWE,
// urgency and status at creation), so whoever holds the branch next —
// the next apply of any scan of the branch and tool, or the scan's failure
// — settles it before anything else: it pays what is left, and takes back
// every move of the creation of the issues in the brief that do not exist
// as the scan's. Every later write of an issue the scan did write moved
// its counters from the state it was created in, so the counters end equal
// to the issues, however they were triaged meanwhile.

// created is one group of a journal's new issues that count alike: their
// file, CWE, urgency and status, and their ids (16 bytes each).
type created struct {
	File    string `dynamodbav:"f"`
	CWE     int    `dynamodbav:"c"`
	Urgency string `dynamodbav:"u"`
	Status  string `dynamodbav:"s"`
	IDs     []byte `dynamodbav:"i"`
}

// briefItem is one item of a journal's brief: evidence, not a debt, so it
// is never paid, and it expires (retention).
type briefItem struct {
	ddb.Key
	Groups    []created `dynamodbav:"groups"`
	ExpiresAt int64     `dynamodbav:"expires_at"`
}

// fixGen names the moves that settle generation gen: the same for every
// attempt to settle it, so one that crashed midway is written over.
func fixGen(gen string) string { return gen + "-fix" }

// Bounds of the brief's items: ids in one group, and bytes in one item
// (well below DynamoDB's 400 KB).
const (
	maxCreatedIDs   = 8 << 10
	maxCreatedBytes = 200 << 10
)

// briefItems are the brief of creates.
func briefItems(pk, gen string, creates []Created, expires int64) ([]briefItem, error) {
	type alike struct {
		file           string
		cwe            int
		urgency, state string
	}
	groups := map[alike]*created{}
	var order []*created
	for _, i := range creates {
		k := alike{i.File, i.CWE, i.Urgency, i.Status}
		g := groups[k]
		if g == nil || len(g.IDs) == maxCreatedIDs*16 {
			g = &created{File: i.File, CWE: i.CWE, Urgency: i.Urgency, Status: i.Status}
			groups[k] = g
			order = append(order, g)
		}
		id, err := uuid.Parse(i.ID)
		if err != nil {
			return nil, fmt.Errorf("issue id %q: %w", i.ID, ddb.ErrInvalid)
		}
		g.IDs = append(g.IDs, id[:]...)
	}
	var items []briefItem
	var cur []created
	size := 0
	flush := func() {
		items = append(items, briefItem{Key: ddb.Key{PK: pk, SK: schema.ScanJournalBriefSK(gen, len(items))},
			Groups: cur, ExpiresAt: expires})
		cur, size = nil, 0
	}
	for _, g := range order {
		n := len(g.File) + len(g.IDs) + len(g.Urgency) + len(g.Status) + 32
		if len(cur) > 0 && size+n > maxCreatedBytes {
			flush()
		}
		cur, size = append(cur, *g), size+n
	}
	if len(cur) > 0 {
		flush()
	}
	return items, nil
}

// Settle settles the journal scanID left, if any; the caller holds the
// branch's lease, and its context carries the lease's fence.
func (j *Journal) Settle(ctx context.Context, companyID int64, scanID string) error {
	var m marker
	switch err := j.t.GetItemConsistent(ctx, ddb.Key{PK: schema.ScanJournalPK(companyID, scanID), SK: schema.ScanJournalDoneSK}, &m); {
	case errors.Is(err, ddb.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	brief, err := j.readBrief(ctx, m)
	if err != nil {
		return err
	}
	if !m.Fixed {
		if err := j.writeFix(ctx, companyID, scanID, m, brief); err != nil {
			return err
		}
	}
	settled := map[ddb.Key]bool{}
	for _, gen := range []string{m.Gen, fixGen(m.Gen)} {
		g, err := j.readGeneration(ctx, m.PK, gen)
		if err != nil {
			return err
		}
		if err := j.payGeneration(ctx, companyID, g, settled); err != nil {
			return err
		}
	}
	// Every counter of the brief: the writer may have paid some with plain
	// ADDs and died before settling them.
	due := slices.DeleteFunc(j.issues.CounterKeys(companyID, brief), func(k ddb.Key) bool { return settled[k] })
	if err := j.issues.SettleCounters(ctx, companyID, due); err != nil {
		return err
	}
	return lease.WriteAll(ctx, j.t, []any{m.Key}) // fenced: the scan's next attempt may have journaled again since
}

// readBrief reads the new issues of m's journal, in brief.
func (j *Journal) readBrief(ctx context.Context, m marker) ([]Created, error) {
	var items []briefItem
	if err := j.t.QueryAllConsistent(ctx, ddb.PKBeginsWith(m.PK, schema.ScanJournalBriefPrefix(m.Gen)), &items); err != nil {
		return nil, err
	}
	if len(items) != m.Brief { // expired: settled far too late to know what was written
		return nil, fmt.Errorf("journal of %s: %d of the %d items of its brief are left", m.PK, len(items), m.Brief)
	}
	var brief []Created
	for _, it := range items {
		for _, g := range it.Groups {
			for b := g.IDs; len(b) >= 16; b = b[16:] {
				brief = append(brief, Created{ID: uuid.UUID(b[:16]).String(), ProjectID: m.Project, Branch: m.Branch,
					CWE: g.CWE, File: g.File, Urgency: g.Urgency, Status: g.Status})
			}
		}
	}
	return brief, nil
}

// writeFix writes the moves that take back what generation m.Gen pays for
// the issues of brief that do not exist as the scan's, and marks them
// written. Its writes are fenced, the fix's items too: written late, after
// the next holder settled the journal, they would be paid again, or
// deleted before it pays them.
func (j *Journal) writeFix(ctx context.Context, companyID int64, scanID string, m marker, brief []Created) error {
	ids := make([]string, len(brief))
	for n, c := range brief {
		ids[n] = c.ID
	}
	written, err := j.issues.Written(ctx, companyID, scanID, ids)
	if err != nil {
		return err
	}
	never := slices.DeleteFunc(slices.Clone(brief), func(c Created) bool { return written[c.ID] })
	// What a crashed attempt wrote goes first: this one may write fewer
	// items.
	old, err := j.readGeneration(ctx, m.PK, fixGen(m.Gen))
	if err != nil {
		return err
	}
	stale := make([]any, 0, len(old.keys()))
	for _, k := range old.keys() {
		stale = append(stale, k)
	}
	if err := lease.WriteAll(ctx, j.t, stale); err != nil {
		return err
	}
	if len(never) > 0 {
		g, err := j.newGeneration(ctx, companyID, m.PK, fixGen(m.Gen), never, m.At, true, j.t.Clock().Add(retention).Unix())
		if err != nil {
			return err
		}
		if err := lease.WriteAll(ctx, j.t, g.items()); err != nil {
			return err
		}
	}
	fixed, err := j.t.TxUpdate(m.Key, expression.Set(expression.Name("fixed"), expression.Value(true)), nil)
	if err != nil {
		return err
	}
	return lease.Transact(ctx, j.t, []types.TransactWriteItem{fixed})
}
