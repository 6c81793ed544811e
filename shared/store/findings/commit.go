package findings

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/lease"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/trends"
)

// Actor is who changed an issue: a user, or the scan whose upload did;
// RuleID names the triage rule the change applied.
type Actor struct {
	UserID int64  `dynamodbav:"user_id,omitempty" json:"user_id,omitempty"`
	ScanID string `dynamodbav:"scan_id,omitempty" json:"scan_id,omitempty"`
	RuleID string `dynamodbav:"rule_id,omitempty" json:"rule_id,omitempty"`
}

// IssueChange is one issue's transition: Before is nil for a new issue,
// After is nil for a deleted one. A status change records its history
// entry (by, reason) in the same transaction, and so do events, the
// change's own events beside issue_status_changed.
type IssueChange struct {
	Before, After *Issue
	By            Actor
	Reason        string
	Events        []schema.Event
}

// commitIssues writes changes in transactions of at most maxTxItems items:
// each issue (conditional on the version it was computed from, or on not
// existing), its history entry and issue_status_changed event when its
// status changes, and atomic ADDs to the counters of the issues' groups,
// added up per transaction. first (audit entries) goes into the first
// transaction, so it commits with the first change. A failed condition (a
// concurrent writer of the same issue) is ErrConflict, and the
// transactions committed before it stay committed (each is exact on its
// own). It returns how many changes were committed. Callers settle the
// counters afterwards (settleCounters).
func (x *Findings) commitIssues(ctx context.Context, companyID int64, changes []IssueChange, first ...types.TransactWriteItem) (int, error) {
	at := x.t.Stamp()
	if err := x.settleTerms(ctx, companyID, changes, at); err != nil {
		return 0, err
	}
	for n := range changes {
		if a, b := changes[n].After, changes[n].Before; a != nil {
			a.Version = 1
			if b != nil {
				a.Version, a.UpdatedAt = b.Version+1, at
			}
			if err := a.SetDue(b); err != nil {
				return 0, err
			}
		}
	}
	// Neighbours share counters, so sorted chunks hold more issues each.
	slices.SortStableFunc(changes, func(a, b IssueChange) int {
		x, y := a.issue(), b.issue()
		return cmp.Or(cmp.Compare(x.ProjectID, y.ProjectID), strings.Compare(x.Branch, y.Branch),
			cmp.Compare(x.CWE, y.CWE), strings.Compare(x.FilePath, y.FilePath))
	})
	fixSLA, err := x.fixSettings(ctx, companyID, changes)
	if err != nil {
		return 0, err
	}
	done := 0
	for n, chunk := range ChunkChanges(companyID, changes, len(first)) {
		items, err := x.txChanges(companyID, chunk, at)
		if err != nil {
			return done, err
		}
		moves, err := x.txTrend(companyID, chunk, at, fixSLA)
		if err != nil {
			return done, err
		}
		items = append(items, moves...)
		if n == 0 {
			items = append(items, first...)
		}
		if err := lease.Transact(ctx, x.t, items); err != nil {
			return done, err
		}
		done += len(chunk)
	}
	return done, nil
}

// issue is the issue a change is about.
func (c IssueChange) issue() *Issue {
	if c.After != nil {
		return c.After
	}
	return c.Before
}

// historyEntry reports whether the change records a history entry: a
// status change, a triage rule acting on a new issue, or an accepted
// risk's end moved while it stays accepted (extending an acceptance is a
// decision about the issue's status as much as accepting it was).
func (c IssueChange) historyEntry() bool {
	if c.Before == nil {
		return c.After != nil && c.By.RuleID != ""
	}
	return c.statusChange() || c.acceptanceMoved()
}

// statusChange reports whether the change moves an existing issue's
// status: what issue_status_changed announces.
func (c IssueChange) statusChange() bool {
	return c.Before != nil && c.After != nil && c.Before.Status != c.After.Status
}

// acceptanceMoved reports whether an accepted risk stays accepted with
// another end (extended, or shortened).
func (c IssueChange) acceptanceMoved() bool {
	return c.Before != nil && c.After != nil && c.Before.Status == "accepted_risk" && c.After.Status == "accepted_risk" &&
		c.Before.ExpiresAt != c.After.ExpiresAt
}

// txItems is how many items the change writes beside the counters: the
// issue, its history entry, its issue_status_changed event, its own
// events.
func (c IssueChange) txItems() int {
	return 1 + b2i(c.historyEntry()) + b2i(c.statusChange()) + len(c.Events)
}

// txChanges is one transaction's items for chunk.
func (x *Findings) txChanges(companyID int64, chunk []IssueChange, at string) ([]types.TransactWriteItem, error) {
	var items []types.TransactWriteItem
	for n, c := range chunk {
		item, err := x.txIssue(c)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
		if c.historyEntry() {
			h := NewHistory(companyID, c, at, n)
			item, err := x.t.TxPutNew(h)
			if err != nil {
				return nil, err
			}
			items = append(items, item)
			if c.Before == nil { // a new issue's status is no change to announce
				continue
			}
		}
		if c.statusChange() { // an extension keeps the status: nothing to announce
			e, err := statusChanged(companyID, c)
			if err != nil {
				return nil, err
			}
			ev, err := x.l.TxEvent(e)
			if err != nil {
				return nil, err
			}
			items = append(items, ev)
		}
		for _, e := range c.Events {
			ev, err := x.l.TxEvent(e)
			if err != nil {
				return nil, err
			}
			items = append(items, ev)
		}
	}
	for k, d := range counterDeltas(companyID, chunk) {
		item, err := x.txCounter(k, d)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, nil
}

// txIssue is the issue's own write, conditional on the state the change
// was computed from.
func (x *Findings) txIssue(c IssueChange) (types.TransactWriteItem, error) {
	if c.Before == nil {
		return x.t.TxPutNew(c.After)
	}
	cond := expression.Name("ver").Equal(expression.Value(c.Before.Version))
	if c.Before.Version == 0 { // written before versions existed
		cond = expression.AttributeNotExists(expression.Name("ver"))
	}
	if c.After != nil {
		return x.t.TxPut(c.After, &cond)
	}
	return x.t.TxDelete(c.Before.Key, cond)
}

// ChunkChanges splits changes so that each chunk's transaction (its issues,
// their history entries and events and the distinct counters they touch)
// stays within DynamoDB's item limit, less the room of a lease's fence
// (fence.go), the first one leaving room for reserve more items.
func ChunkChanges(companyID int64, changes []IssueChange, reserve int) [][]IssueChange {
	var chunks [][]IssueChange
	var cur []IssueChange
	counters := map[ddb.Key]bool{}
	items := reserve
	for _, c := range changes {
		issues := []Issue{*c.issue()}
		if c.Before != nil && c.After != nil {
			issues = append(issues, *c.Before)
		}
		keys := uniqueKeys(append(CounterKeys(companyID, issues), trends.Keys(companyID, c.issue().ProjectID)...))
		need := c.txItems()
		for k := range keys {
			if !counters[k] {
				need++
			}
		}
		if len(cur) > 0 && items+need > ddb.MaxTxItems-lease.FenceRoom {
			chunks = append(chunks, cur)
			cur, counters, items = nil, map[ddb.Key]bool{}, 0
			need = c.txItems() + len(keys)
		}
		cur = append(cur, c)
		items += need
		for k := range keys {
			counters[k] = true
		}
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	return chunks
}

func uniqueKeys(keys []ddb.Key) map[ddb.Key]bool {
	out := map[ddb.Key]bool{}
	for _, k := range keys {
		out[k] = true
	}
	return out
}

// statusChanged is the issue_status_changed event of a status change. Its
// id names the issue's new version, so a retried transaction records the
// same event and every later change a new one.
func statusChanged(companyID int64, c IssueChange) (schema.Event, error) {
	var by *int64
	if c.By.UserID != 0 {
		by = &c.By.UserID
	}
	data, err := json.Marshal(map[string]any{
		"issue_id": c.After.ID, "project_id": c.After.ProjectID, "project_name": c.After.ProjectName,
		"title": c.After.Title, "previous_status": c.Before.Status, "status": c.After.Status, "changed_by": by,
	})
	return schema.Event{ID: fmt.Sprintf("issue_status_changed-%s-v%d", c.After.ID, c.After.Version), CompanyID: companyID,
		Type: "issue_status_changed", Data: data}, err
}
