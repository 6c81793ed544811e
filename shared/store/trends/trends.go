// Package trends keeps the per-day trend records of the issues' scopes (the
// company and each project; the arithmetic is shared/trendmath's): the moves
// the issue write path adds to them, inside its own transactions or its
// scan journal so that they are exact under retries and concurrency, and
// the snapshot read of a window, which costs the window's day records and
// the totals, never the issues.
package trends

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
	"github.com/acme/codescan-api/shared/trendmath"
)

// Trends reads and moves the trend records of one table.
type Trends struct{ t *ddb.Table }

// New returns the trend records of the table t.
func New(t *ddb.Table) *Trends { return &Trends{t: t} }

// Change is one issue transition the write path commits, with the project
// of the issue.
type Change struct {
	ProjectID int64
	trendmath.Change
}

// Move is what one transaction (or one journal item) adds to one scope's
// records of one day: the day record's and the totals' increments, as
// attributes (see trendmath.Day.Attrs, TotalsAttrs). Journal items store it.
type Move struct {
	ProjectID int64            `dynamodbav:"project"` // 0: the company
	Date      string           `dynamodbav:"date"`
	Day       map[string]int64 `dynamodbav:"day"`
	Totals    map[string]int64 `dynamodbav:"totals"`
}

// Reversed is what takes m back: every increment negated but the totals'
// seq, which counts changes (taking one back is a change too; see
// trendmath.Totals).
func (m Move) Reversed() Move {
	neg := func(attrs map[string]int64, keep string) map[string]int64 {
		out := make(map[string]int64, len(attrs))
		for k, v := range attrs {
			if k == keep {
				out[k] = v
			} else {
				out[k] = -v
			}
		}
		return out
	}
	return Move{ProjectID: m.ProjectID, Date: m.Date, Day: neg(m.Day, ""), Totals: neg(m.Totals, trendmath.SeqAttr)}
}

// Moves adds up the deltas of changes per scope (the company and the
// issue's project) and day; changes that move no counter add nothing.
func Moves(changes []Change) ([]Move, error) {
	by := map[int64][]trendmath.Day{}
	for _, c := range changes {
		d, err := c.Delta()
		if err != nil {
			return nil, err
		}
		if d.IsZero() {
			continue
		}
		by[0] = append(by[0], d)
		by[c.ProjectID] = append(by[c.ProjectID], d)
	}
	var out []Move
	for _, p := range slices.Sorted(maps.Keys(by)) {
		for _, d := range trendmath.Merge(by[p]) {
			out = append(out, Move{ProjectID: p, Date: d.Date, Day: d.Attrs(), Totals: d.TotalsAttrs()})
		}
	}
	return out, nil
}

// Keys are the records a change of one of a project's issues may move, as
// a transaction sizes them: the day record (of the transaction's one day)
// and the totals of the company and of the project.
func Keys(companyID, projectID int64) []ddb.Key {
	return []ddb.Key{
		schema.TrendDayKey(companyID, 0, ""), schema.TrendTotalsKey(companyID, 0),
		schema.TrendDayKey(companyID, projectID, ""), schema.TrendTotalsKey(companyID, projectID),
	}
}

// sums adds up moves per record (a transaction takes an item once).
func sums(companyID int64, moves []Move) (map[ddb.Key]map[string]int64, []ddb.Key) {
	adds := map[ddb.Key]map[string]int64{}
	add := func(k ddb.Key, attrs map[string]int64) {
		if adds[k] == nil {
			adds[k] = map[string]int64{}
		}
		for name, v := range attrs {
			adds[k][name] += v
		}
	}
	for _, m := range moves {
		add(schema.TrendDayKey(companyID, m.ProjectID, m.Date), m.Day)
		add(schema.TrendTotalsKey(companyID, m.ProjectID), m.Totals)
	}
	keys := slices.SortedFunc(maps.Keys(adds), func(a, b ddb.Key) int { return cmp.Or(cmp.Compare(a.PK, b.PK), cmp.Compare(a.SK, b.SK)) })
	return adds, keys
}

// TxMoves are the transaction items that apply moves: one ADD per day
// record and one per scope's totals.
func (tr *Trends) TxMoves(companyID int64, moves []Move) ([]types.TransactWriteItem, error) {
	adds, keys := sums(companyID, moves)
	items := make([]types.TransactWriteItem, 0, len(keys))
	for _, k := range keys {
		var upd expression.UpdateBuilder
		n := 0
		for _, name := range slices.Sorted(maps.Keys(adds[k])) {
			if v := adds[k][name]; v != 0 {
				upd = upd.Add(expression.Name(name), expression.Value(v))
				n++
			}
		}
		if n == 0 {
			continue
		}
		item, err := tr.t.TxUpdate(k, upd, nil)
		if err != nil {
			return nil, fmt.Errorf("trend move %s/%s: %w", k.PK, k.SK, err)
		}
		items = append(items, item)
	}
	return items, nil
}

// Items are the records moves leave in scopes that have none: what
// applying them writes, for the bench loader.
func Items(companyID int64, moves []Move) []any {
	adds, keys := sums(companyID, moves)
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		item := map[string]any{tabledef.PK: k.PK, tabledef.SK: k.SK}
		for name, v := range adds[k] {
			if v != 0 {
				item[name] = v
			}
		}
		out = append(out, item)
	}
	return out
}
