package sca

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Decide is what a caller sets of an SCA finding as it is read: its new
// status and reason, ok false to leave it as it is. It is called again
// for a finding read again (a concurrent change), so it decides from the
// finding it is given, never from what an earlier read showed.
type Decide func(Issue) (status, reason string, ok bool)

// SetSCAStatuses is the SCA findings' status write path for statements
// from outside the scans (a VEX document, shared/vex): the findings of
// ids take what decide returns, each written conditional on the status
// and reason read (a finding changed meanwhile is read again and decided
// again), in transactions of a chunk each, with the audit entry e in the
// first write (none when nothing changes). A status set this way is no
// triage rule's: triage_rule_id goes. SCA findings keep no history (see
// rules.go): the reason says where the status came from. Returns the
// ids changed; ids of the company only (another company's are not
// there).
func (x *SCA) SetSCAStatuses(ctx context.Context, companyID int64, ids []string, decide Decide, e ledger.AuditEntry) ([]string, error) {
	var done []string
	for chunk := range slices.Chunk(ids, applyChunk) {
		err := x.t.Retrying(ctx, func() error {
			items, changed, err := x.statusWrites(ctx, companyID, chunk, decide)
			if err != nil || len(items) == 0 {
				return err
			}
			if len(done) == 0 {
				audit, err := x.l.TxAudit(ctx, companyID, e)
				if err != nil {
					return err
				}
				items = append(items, audit...)
			}
			if err := x.t.Transact(ctx, items); err != nil {
				return err
			}
			done = append(done, changed...)
			return nil
		})
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// statusWrites reads the findings of ids (strongly) and returns the
// conditional writes decide asks for and the ids they change.
func (x *SCA) statusWrites(ctx context.Context, companyID int64, ids []string, decide Decide) ([]types.TransactWriteItem, []string, error) {
	keys := make([]ddb.Key, len(ids))
	for n, id := range ids {
		keys[n] = schema.SCAIssueKey(companyID, id)
	}
	got, err := x.t.ReadBatch(ctx, keys, true)
	if err != nil {
		return nil, nil, err
	}
	var items []types.TransactWriteItem
	var changed []string
	for n, k := range keys {
		av, ok := got[k]
		if !ok {
			continue
		}
		var i Issue
		if err := attributevalue.UnmarshalMap(av, &i); err != nil {
			return nil, nil, err
		}
		status, reason, ok := decide(i)
		if !ok || (status == i.Status && reason == i.Reason) {
			continue
		}
		item, err := x.statusWrite(k, i, status, reason)
		if err != nil {
			return nil, nil, err
		}
		items, changed = append(items, item), append(changed, ids[n])
	}
	return items, changed, nil
}

// statusWrite sets status and reason on finding i (at k), conditional on
// the status and reason it was read with.
func (x *SCA) statusWrite(k ddb.Key, i Issue, status, reason string) (types.TransactWriteItem, error) {
	upd := expression.Set(expression.Name("status"), expression.Value(status)).
		Remove(expression.Name("triage_rule_id"))
	if reason != "" {
		upd = upd.Set(expression.Name("reason"), expression.Value(reason))
	} else {
		upd = upd.Remove(expression.Name("reason"))
	}
	cond := expression.Name("status").Equal(expression.Value(i.Status))
	if i.Reason != "" {
		cond = cond.And(expression.Name("reason").Equal(expression.Value(i.Reason)))
	} else {
		cond = cond.And(expression.AttributeNotExists(expression.Name("reason")))
	}
	return x.t.TxUpdate(k, upd, &cond)
}
