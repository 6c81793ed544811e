package findings

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/journal"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/scans"
)

// Settling a scan's journal. Its writer pays the journal while it writes
// the issues, so a writer that gives up midway (a crash, every retry
// failed) can leave counters paid for issues it never wrote, and others
// not yet paid. The journal keeps its new issues in brief (id, file, CWE,
// urgency and status at creation), so whoever holds the branch next —
// the next apply of any scan of the branch and tool, or the scan's failure
// — settles it before anything else: it pays what is left, and takes back
// what was paid for the issues that do not exist as the scan's. Every
// later write of an issue the scan did write moved its counters from the
// state it was created in, so the counters end equal to the issues, however
// they were triaged meanwhile.

// created is one group of a journal's new issues that count alike: their
// file, CWE, urgency and status, and their ids (16 bytes each). The items
// that hold them (the brief) are evidence, not debts: DynamoDB removes them
// briefRetention after they were written, at no write cost, long after any
// scan is settled (every upload is failed by the stalled sweep two hours
// after it was made, when nothing completed it).
type created struct {
	File    string `dynamodbav:"f"`
	CWE     int    `dynamodbav:"c"`
	Urgency string `dynamodbav:"u"`
	Status  string `dynamodbav:"s"`
	IDs     []byte `dynamodbav:"i"`
}

func createdPrefix(gen string) string { return "N#" + gen + "#" }

const briefRetention = 7 * 24 * time.Hour

// briefItem is one item of the brief.
type briefItem struct {
	journal.Item[created]
	ExpiresAt int64 `dynamodbav:"expires_at"` // the table's TTL attribute
}

// fixGen names the moves that settle generation gen: the same for every
// attempt to settle it, so one that crashed midway is written over.
func fixGen(gen string) string { return gen + "-fix" }

// Bounds of the items of new issues: ids in one group, and bytes in one
// item (well below DynamoDB's 400 KB).
const (
	maxCreatedIDs   = 8 << 10
	maxCreatedBytes = 200 << 10
)

// createdItems are the brief of creates, written at now.
func createdItems(pk, gen string, creates []IssueChange, now time.Time) []briefItem {
	type alike struct {
		file           string
		cwe            int
		urgency, state string
	}
	groups := map[alike]*created{}
	var order []*created
	for _, c := range creates {
		i := c.After
		k := alike{i.FilePath, i.CWE, i.Urgency, i.Status}
		g := groups[k]
		if g == nil || len(g.IDs) == maxCreatedIDs*16 {
			g = &created{File: i.FilePath, CWE: i.CWE, Urgency: i.Urgency, Status: i.Status}
			groups[k] = g
			order = append(order, g)
		}
		id := uuid.MustParse(i.ID) // ids are uuids (schema.IssueID)
		g.IDs = append(g.IDs, id[:]...)
	}
	var items []briefItem
	var cur []created
	size := 0
	flush := func() {
		items = append(items, briefItem{Item: journal.Item[created]{
			Key: ddb.Key{PK: pk, SK: fmt.Sprintf("%s%06d", createdPrefix(gen), len(items))}, Moves: cur},
			ExpiresAt: now.Add(briefRetention).Unix()})
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
	return items
}

// settleJournal settles the journal scanID left, if any; the caller holds
// the branch's lease.
func (x *Findings) settleJournal(ctx context.Context, companyID int64, scanID string) error {
	pk := journalPK(companyID, scanID)
	var m journalMarker
	switch err := x.t.GetItemConsistent(ctx, ddb.Key{PK: pk, SK: journalDone}, &m); {
	case errors.Is(err, ddb.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	if m.Gen == "" { // an earlier version's, which paid as it went
		return x.t.DeleteItem(ctx, m.Key)
	}
	if !m.Fixed {
		if err := x.writeFix(ctx, companyID, scanID, m); err != nil {
			return err
		}
	}
	settled := map[ddb.Key]bool{}
	var moved []ddb.Key
	for _, gen := range []string{m.Gen, fixGen(m.Gen)} {
		keys, err := x.payJournal(ctx, companyID, pk, gen, settled)
		if err != nil {
			return err
		}
		moved = append(moved, keys...)
	}
	var due []ddb.Key
	for _, k := range moved {
		if !settled[k] {
			settled[k] = true
			due = append(due, k)
		}
	}
	if err := x.settleCounters(ctx, companyID, due); err != nil {
		return err
	}
	return x.t.DeleteItem(ctx, m.Key)
}

// writeFix writes the moves that take back what generation m.Gen pays for
// its issues that do not exist as the scan's, and marks them written.
func (x *Findings) writeFix(ctx context.Context, companyID int64, scanID string, m journalMarker) error {
	groups, err := journal.Pending[created](ctx, x.t, m.PK, createdPrefix(m.Gen))
	if err != nil {
		return err
	}
	var brief []Issue
	for _, it := range groups {
		for _, g := range it.Moves {
			for b := g.IDs; len(b) >= 16; b = b[16:] {
				brief = append(brief, Issue{ID: uuid.UUID(b[:16]).String(), ProjectID: m.Project, Branch: m.Branch,
					CWE: g.CWE, FilePath: g.File, Urgency: g.Urgency, Status: g.Status, CreatedAt: m.At})
			}
		}
	}
	got, err := x.issuesByID(ctx, companyID, IDs(brief))
	if err != nil {
		return err
	}
	var never []IssueChange
	for n := range brief {
		if i, ok := got[brief[n].ID]; !ok || i.ScanID != scanID {
			never = append(never, IssueChange{Before: &brief[n]})
		}
	}
	if len(never) > 0 {
		items, err := x.journalItems(ctx, companyID, m.PK, fixGen(m.Gen), never, m.At)
		if err != nil {
			return err
		}
		if err := x.t.BatchPutParallel(ctx, items); err != nil {
			return err
		}
	}
	return x.t.Update(ctx, m.Key, expression.Set(expression.Name("fixed"), expression.Value(true)), nil, nil)
}

// FailScan ends a scan that is still processing as incomplete (see
// scans.FailScan). When the branch's head names the scan's journal, it
// first settles it under the branch's lease, so that the counters equal the
// issues the scan wrote; a branch busy with another upload for longer than
// a lease wait answers ErrUnavailable, to be tried again.
func (x *Findings) FailScan(ctx context.Context, companyID int64, scanID, reason string, problems []scans.ScanError, ev *schema.Event) (bool, error) {
	sc, err := x.d.Scans.GetScan(ctx, companyID, scanID)
	if err != nil {
		return false, err
	}
	var head ScanHead
	err = x.t.GetItemConsistent(ctx, headKey(companyID, sc.ProjectID, sc.Branch, sc.Tool), &head)
	if err != nil && !errors.Is(err, ddb.ErrNotFound) {
		return false, err
	}
	if head.Journal == sc.ID {
		lease := sc.ID + "/fail/" + uuid.NewString()
		if _, err := x.takeLease(ctx, companyID, sc, lease); err != nil {
			return false, err
		}
		stop := x.keepLease(ctx, companyID, sc, lease)
		err := x.settleJournal(ctx, companyID, sc.ID)
		stop()
		x.releaseLease(ctx, companyID, sc, lease)
		if err != nil {
			return false, err
		}
	}
	return x.d.Scans.FailScan(ctx, companyID, sc.ID, reason, problems, ev)
}
