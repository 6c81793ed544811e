package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/tabledef"
)

// A scan's new issues are written in bulk, not one transaction per handful
// of issues: their counter deltas are added up over the whole scan and
// written first as a journal (one item per counter, then a marker), the
// issues then go out with parallel BatchWriteItem calls, and each journal
// item is applied to its counter (ADD) and deleted in one transaction. So
// each counter is written once per scan, however many issues it gains, and
// a crash anywhere leaves a state the next attempt finishes exactly: before
// the marker nothing counts; after it, the journal, not the issues, says
// what the counters still owe, and an applied item is gone. Only the
// scan's lease holder creates issues on its branch and tool, so a retry's
// "issues that do not exist yet" are exactly the first attempt's unwritten
// ones.

func journalPK(companyID int64, scanID string) string {
	return fmt.Sprintf("%s#JRNL#%s", CompanyPK(companyID), scanID)
}

// journalDone is the marker's sort key: after every counter key (GRP#...).
const journalDone = "~DONE"

type journalEntry struct {
	Key
	Project int64     `dynamodbav:"scope_project"`
	Branch  string    `dynamodbav:"scope_branch"`
	Dim     Dimension `dynamodbav:"dim"`
	Group   string    `dynamodbav:"group"`
	Cells   Cells     `dynamodbav:"cells"`
}

// bulkCreate writes new issues (changes without before) and counts them.
func (s *Store) bulkCreate(ctx context.Context, companyID int64, scanID string, creates []issueChange) error {
	pk := journalPK(companyID, scanID)
	var marker Key
	err := s.getItem(ctx, Key{PK: pk, SK: journalDone}, &marker)
	switch {
	case errors.Is(err, ErrNotFound) && len(creates) == 0:
		return nil // nothing to create, nothing owed
	case errors.Is(err, ErrNotFound):
		if err := s.writeJournal(ctx, companyID, pk, creates); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	items := make([]any, len(creates))
	for n, c := range creates {
		c.after.Version = 1
		items[n] = c.after
	}
	if err := s.batchPutParallel(ctx, items); err != nil {
		return err
	}
	if err := s.applyJournal(ctx, companyID, pk); err != nil {
		return err
	}
	// Paid in full: a later apply of the scan journals afresh.
	return s.deleteItem(ctx, Key{PK: pk, SK: journalDone})
}

func (s *Store) writeJournal(ctx context.Context, companyID int64, pk string, creates []issueChange) error {
	var items []any
	for k, d := range counterDeltas(companyID, creates) {
		items = append(items, journalEntry{Key: Key{PK: pk, SK: k.SK}, Project: d.scope.ProjectID,
			Branch: d.scope.Branch, Dim: d.dim, Group: d.group, Cells: d.cells})
	}
	if err := s.batchPutParallel(ctx, items); err != nil {
		return err
	}
	return s.putItem(ctx, Key{PK: pk, SK: journalDone}, nil)
}

// applyJournal adds every remaining journal entry to its counter, deleting
// the entry in the same transaction.
func (s *Store) applyJournal(ctx context.Context, companyID int64, pk string) error {
	var entries []journalEntry
	if err := s.queryAll(ctx, "", pkBeginsWith(pk, "GRP#"), true, &entries); err != nil {
		return err
	}
	exists := expression.AttributeExists(expression.Name(tabledef.PK))
	for start := 0; start < len(entries); start += maxTxItems / 2 {
		var items []types.TransactWriteItem
		for _, e := range entries[start:min(start+maxTxItems/2, len(entries))] {
			d := &counterDelta{scope: Scope{ProjectID: e.Project, Branch: e.Branch}, dim: e.Dim, group: e.Group, cells: e.Cells}
			add, err := s.txCounter(Key{PK: CompanyPK(companyID), SK: e.SK}, d)
			if err != nil {
				return err
			}
			del, err := s.txDelete(e.Key, exists)
			if err != nil {
				return err
			}
			items = append(items, add, del)
		}
		if err := s.retrying(ctx, func() error { return s.transact(ctx, items) }); err != nil {
			return err
		}
	}
	return nil
}
