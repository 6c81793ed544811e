package findings

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/lease"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Group counters: for every scope an issue belongs to (the company, its
// project, its project's branch) and every dimension (CWE, file path), one
// item counts the group's issues per urgency and status, in numeric
// attributes n_<urgency>_<status> and their sum issue_count. The write path
// moves them with unconditional atomic ADDs in the same transaction as the
// issues (see commitIssues), so concurrent writers never conflict on them
// and reading grouped counts never touches an issue:
//
//	counter  PK C#<company>  SK GRP#<dim>#<scope>#<group>
//	         GSI1PK C#<company>#GRP#<dim>#<scope>     (only while indexed)
//	         GSI1SK <10-digit inverted count>#<group sort key>
//	summary  PK C#<company>  SK SCOPE#<scope>   (non-empty groups per dimension;
//	         for a branch scope also GSI2PK C#<company>#BRANCH#<branch hash>, GSI2SK <scope>)
//
// The count-ordered index keys and the summary's group totals depend on the
// count, which an ADD does not return: every writer settles the counters it
// touched after its transaction (settleCounters), conditional on the count
// it read. The last writer of a counter reads its final count, so the index
// converges on every count; a counter at zero leaves the index (and its
// scope's group total) but stays as an item.

var dimensions = []schema.Dimension{schema.ByCWE, schema.ByFile}

// Cells are counts per urgency and status, keyed "<urgency>/<status>";
// zero cells are left out.
type Cells map[string]int64

func cellKey(urgency, status string) string { return schema.CellKey(urgency, status) }

// Total counts the issues whose urgency and status match (empty = any).
func (c Cells) Total(urgency, status string) int64 {
	var n int64
	for k, v := range c {
		u, s, _ := strings.Cut(k, "/")
		if (urgency == "" || u == urgency) && (status == "" || s == status) {
			n += v
		}
	}
	return n
}

// ByUrgency sums the cells per urgency code (every code present).
func (c Cells) ByUrgency() map[string]int64 {
	out := map[string]int64{}
	for _, u := range Urgencies {
		out[u] = c.Total(u, "")
	}
	return out
}

// ByStatus sums the cells per status (every status present).
func (c Cells) ByStatus() map[string]int64 {
	out := map[string]int64{}
	for _, s := range Statuses {
		out[s] = c.Total("", s)
	}
	return out
}

type counterDelta struct {
	scope schema.Scope
	dim   schema.Dimension
	group string
	cells Cells
}

// counterDeltas adds up what changes do to every counter they touch;
// counters left unchanged are dropped.
func counterDeltas(companyID int64, changes []IssueChange) map[ddb.Key]*counterDelta {
	byGroup := map[groupRef]*counterDelta{}
	add := func(i *Issue, n int64) {
		i.eachGroup(func(g groupRef) {
			d := byGroup[g]
			if d == nil {
				d = &counterDelta{scope: g.scope, dim: g.dim, group: g.group, cells: Cells{}}
				byGroup[g] = d
			}
			d.cells[cellKey(i.Urgency, i.Status)] += n
		})
	}
	for _, c := range changes {
		if c.Before != nil {
			add(c.Before, -1)
		}
		if c.After != nil {
			add(c.After, 1)
		}
	}
	out := make(map[ddb.Key]*counterDelta, len(byGroup))
	for g, d := range byGroup {
		maps.DeleteFunc(d.cells, func(_ string, v int64) bool { return v == 0 })
		if len(d.cells) > 0 {
			out[g.key(companyID)] = d
		}
	}
	return out
}

// txCounter adds d to its counter with atomic ADDs (creating it if needed):
// no read, no condition, so concurrent writers of a hot counter commute.
func (x *Findings) txCounter(k ddb.Key, d *counterDelta) (types.TransactWriteItem, error) {
	return x.t.TxUpdate(k, counterAdds(d), nil)
}

func counterAdds(d *counterDelta) expression.UpdateBuilder {
	upd := expression.Set(expression.Name("dim"), expression.Value(d.dim)).
		Set(expression.Name("group"), expression.Value(d.group)).
		Set(expression.Name("scope_project"), expression.Value(d.scope.ProjectID)).
		Set(expression.Name("scope_branch"), expression.Value(d.scope.Branch)).
		Add(expression.Name(schema.CounterCount), expression.Value(d.cells.Total("", "")))
	for c, n := range d.cells {
		upd = upd.Add(expression.Name(schema.CellAttr(c)), expression.Value(n))
	}
	return upd
}

// txCounterSettled is txCounter for a counter read as was (zero when
// absent) that also sets the index keys of the count it makes, returned:
// conditional on the counter still being as read.
func (x *Findings) txCounterSettled(companyID int64, k ddb.Key, d *counterDelta, was counterState) (types.TransactWriteItem, int64, error) {
	now := was.Count + d.cells.Total("", "")
	upd := setIndexKeys(counterAdds(d), companyID, d.scope, d.dim, now, d.group)
	cond := zeroOrEqual(schema.CounterCount, was.Count).And(zeroOrEqual(schema.CounterIndexed, was.indexed))
	item, err := x.t.TxUpdate(k, upd, &cond)
	return item, now, err
}

// setIndexKeys sets a counter's indexed count and its index keys for
// count, or takes it out of the index at zero.
func setIndexKeys(upd expression.UpdateBuilder, companyID int64, sc schema.Scope, dim schema.Dimension, count int64, group string) expression.UpdateBuilder {
	upd = upd.Set(expression.Name(schema.CounterIndexed), expression.Value(count))
	if count == 0 {
		return upd.Remove(expression.Name(tabledef.GSI1.PK)).Remove(expression.Name(tabledef.GSI1.SK))
	}
	return upd.Set(expression.Name(tabledef.GSI1.PK), expression.Value(schema.CounterIndexPK(companyID, sc, dim))).
		Set(expression.Name(tabledef.GSI1.SK), expression.Value(schema.CounterIndexSK(dim, group, count)))
}

// zeroOrEqual: the numeric attribute is n, where absent counts as 0.
func zeroOrEqual(attr string, n int64) expression.ConditionBuilder {
	if n != 0 {
		return expression.Name(attr).Equal(expression.Value(n))
	}
	return expression.Or(expression.AttributeNotExists(expression.Name(attr)), expression.Name(attr).Equal(expression.Value(0)))
}

// settleCounters brings the index keys and scope group totals of counters
// in line with their counts, many counters to a transaction (with one
// summary update per scope). Each counter is settled conditional on the
// count read: when another writer moved it meanwhile, that writer settles
// it after its own transaction, so a failed condition is left to it (the
// counters of a cancelled transaction are retried one by one).
func (x *Findings) settleCounters(ctx context.Context, companyID int64, keys []ddb.Key) error {
	got, err := x.t.BatchGet(ctx, keys)
	if err != nil {
		return err
	}
	var due []settlement
	for _, k := range keys {
		av, ok := got[k]
		if !ok {
			continue
		}
		c, err := decodeCounter(av)
		if err != nil {
			return err
		}
		wantSK := ""
		if c.Count > 0 {
			wantSK = schema.CounterIndexSK(c.Dim, c.Group, c.Count)
		}
		if c.indexed != c.Count || c.sk != wantSK {
			due = append(due, settlement{key: k, counterState: c})
		}
	}
	for _, chunk := range settleChunks(due) {
		err := x.settleMany(ctx, companyID, chunk)
		if errors.Is(err, ddb.ErrConflict) {
			for _, st := range chunk {
				if err := x.settleMany(ctx, companyID, []settlement{st}); err != nil && !errors.Is(err, ddb.ErrConflict) {
					return err
				}
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// settleChunks groups settlements into transactions: each holds its
// counters and one summary per scope they belong to (and a lease's fence).
func settleChunks(due []settlement) [][]settlement {
	slices.SortStableFunc(due, func(a, b settlement) int {
		return cmp.Or(cmp.Compare(a.scope.ProjectID, b.scope.ProjectID), strings.Compare(a.scope.Branch, b.scope.Branch))
	})
	var out [][]settlement
	var cur []settlement
	scopes := map[schema.Scope]bool{}
	for _, st := range due {
		if len(cur)+len(scopes)+1+b2i(!scopes[st.scope]) > ddb.MaxTxItems-lease.FenceRoom {
			out = append(out, cur)
			cur, scopes = nil, map[schema.Scope]bool{}
		}
		cur = append(cur, st)
		scopes[st.scope] = true
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// settlement is one counter to settle.
type settlement struct {
	key ddb.Key
	counterState
}

// settleMany settles counters in one transaction; ErrConflict when one of
// them moved since it was read.
func (x *Findings) settleMany(ctx context.Context, companyID int64, chunk []settlement) error {
	var items []types.TransactWriteItem
	moves := groupMoves{}
	for _, st := range chunk {
		item, err := x.txSettle(companyID, st)
		if err != nil {
			return err
		}
		items = append(items, item)
		moves.add(st.scope, st.Dim, st.indexed, st.Count)
	}
	sums, err := x.txSummaries(companyID, moves)
	if err != nil {
		return err
	}
	return lease.Transact(ctx, x.t, append(items, sums...))
}

// groupMoves are the changes to scopes' numbers of non-empty groups, per
// dimension, that settling counters makes.
type groupMoves map[schema.Scope]map[schema.Dimension]int

// add records a counter of sc and dim indexed for count from, now for to.
func (m groupMoves) add(sc schema.Scope, dim schema.Dimension, from, to int64) {
	if delta := b2i(to > 0) - b2i(from > 0); delta != 0 {
		if m[sc] == nil {
			m[sc] = map[schema.Dimension]int{}
		}
		m[sc][dim] += delta
	}
}

// txSummaries are the summary updates of m, one per scope.
func (x *Findings) txSummaries(companyID int64, m groupMoves) ([]types.TransactWriteItem, error) {
	var out []types.TransactWriteItem
	for sc, byDim := range m {
		sum, err := x.txSummary(companyID, sc, byDim)
		if err != nil {
			return nil, err
		}
		out = append(out, sum)
	}
	return out, nil
}

// txSettle sets one counter's index keys for its count, conditional on the
// count and the indexed count read.
func (x *Findings) txSettle(companyID int64, st settlement) (types.TransactWriteItem, error) {
	upd := setIndexKeys(expression.UpdateBuilder{}, companyID, st.scope, st.Dim, st.Count, st.Group)
	cond := expression.Name(schema.CounterCount).Equal(expression.Value(st.Count)).And(zeroOrEqual(schema.CounterIndexed, st.indexed))
	return x.t.TxUpdate(st.key, upd, &cond)
}

// counterState is a counter with what settling needs.
type counterState struct {
	GroupCount
	indexed int64
	sk      string
	scope   schema.Scope
}

func decodeCounter(av map[string]types.AttributeValue) (counterState, error) {
	var c counterState
	if err := attributevalue.UnmarshalMap(av, &c.GroupCount); err != nil {
		return c, err
	}
	var meta struct {
		Indexed int64  `dynamodbav:"indexed_count"`
		SK      string `dynamodbav:"GSI1SK"`
		Project int64  `dynamodbav:"scope_project"`
		Branch  string `dynamodbav:"scope_branch"`
	}
	err := attributevalue.UnmarshalMap(av, &meta)
	c.indexed, c.sk, c.scope = meta.Indexed, meta.SK, schema.Scope{ProjectID: meta.Project, Branch: meta.Branch}
	return c, err
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// txSummary adds groups (per dimension) to a scope's summary.
func (x *Findings) txSummary(companyID int64, sc schema.Scope, groups map[schema.Dimension]int) (types.TransactWriteItem, error) {
	upd := expression.Add(expression.Name("groups_cwe"), expression.Value(groups[schema.ByCWE])).
		Add(expression.Name("groups_file_path"), expression.Value(groups[schema.ByFile]))
	if sc.ProjectID != 0 {
		upd = upd.Set(expression.Name("project_id"), expression.Value(sc.ProjectID))
	}
	if sc.Branch != "" {
		upd = upd.Set(expression.Name("branch"), expression.Value(sc.Branch)).
			Set(expression.Name(tabledef.GSI2.PK), expression.Value(schema.BranchIndexPK(companyID, sc.Branch))).
			Set(expression.Name(tabledef.GSI2.SK), expression.Value(schema.ScopeID(sc)))
	}
	return x.t.TxUpdate(schema.SummaryKey(companyID, sc), upd, nil)
}

// GroupCount is one group's counts in a scope (or several scopes merged).
type GroupCount struct {
	Dim   schema.Dimension
	Group string // CWE number ("0" is NoCWE) or file path
	Count int64
	Cells Cells
}

// UnmarshalDynamoDBAttributeValue reads a counter item: its cells are the
// n_<urgency>_<status> attributes.
func (g *GroupCount) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return fmt.Errorf("group schema.Counter is a %T, not a map", av)
	}
	*g = GroupCount{Cells: Cells{}}
	for name, v := range m.Value {
		var err error
		switch {
		case name == "dim":
			err = attributevalue.Unmarshal(v, &g.Dim)
		case name == "group":
			err = attributevalue.Unmarshal(v, &g.Group)
		case name == schema.CounterCount:
			err = attributevalue.Unmarshal(v, &g.Count)
		case strings.HasPrefix(name, schema.CellPrefix):
			var n int64
			err = attributevalue.Unmarshal(v, &n)
			u, st, _ := strings.Cut(strings.TrimPrefix(name, schema.CellPrefix), "_")
			if n != 0 {
				g.Cells[cellKey(u, st)] = n
			}
		}
		if err != nil {
			return fmt.Errorf("group schema.Counter %s: %w", name, err)
		}
	}
	return nil
}
