package trends

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
	"github.com/acme/codescan-api/shared/trendmath"
)

// Snapshot is a scope's day records (from a date on) and its totals as
// one consistent state.
type Snapshot struct {
	Days   []trendmath.Day
	Totals trendmath.Totals
}

// Snapshot reads a scope's (projectID 0: the company's) day records dated
// first or later ("" for every one) and its totals. The totals are read
// before and after the days, strongly consistent: every change adds to
// their seq in the transaction that moves the days, so an equal seq means
// no change came between and the records are one state. A scope whose
// writers keep moving it past a few attempts is ErrUnavailable.
func (tr *Trends) Snapshot(ctx context.Context, companyID, projectID int64, first string) (Snapshot, error) {
	pk := schema.TrendPK(companyID, projectID)
	kc := expression.Key(tabledef.PK).Equal(expression.Value(pk)).And(
		expression.Key(tabledef.SK).Between(expression.Value(schema.TrendDayPrefix+first), expression.Value(schema.TrendDayPrefix+"\U0010FFFF")))
	for range ddb.MaxTxAttempts {
		before, err := tr.totals(ctx, companyID, projectID)
		if err != nil {
			return Snapshot{}, err
		}
		var items []map[string]any
		if err := tr.t.QueryAllConsistent(ctx, kc, &items); err != nil {
			return Snapshot{}, err
		}
		after, err := tr.totals(ctx, companyID, projectID)
		if err != nil {
			return Snapshot{}, err
		}
		if after.Seq != before.Seq {
			continue
		}
		days := make([]trendmath.Day, 0, len(items))
		for _, it := range items {
			sk, _ := it[tabledef.SK].(string)
			d, err := trendmath.ParseDay(strings.TrimPrefix(sk, schema.TrendDayPrefix), counters(it))
			if err != nil {
				return Snapshot{}, err
			}
			days = append(days, d)
		}
		return Snapshot{Days: days, Totals: after}, nil
	}
	return Snapshot{}, fmt.Errorf("%w: the trend of scope %s kept changing while read", ddb.ErrUnavailable, pk)
}

func (tr *Trends) totals(ctx context.Context, companyID, projectID int64) (trendmath.Totals, error) {
	var it map[string]any
	err := tr.t.GetItemConsistent(ctx, schema.TrendTotalsKey(companyID, projectID), &it)
	if errors.Is(err, ddb.ErrNotFound) {
		return trendmath.Totals{}, nil
	}
	if err != nil {
		return trendmath.Totals{}, err
	}
	return trendmath.ParseTotals(counters(it))
}

// counters are an item's numeric attributes (the key and others are
// strings; counts stay far below 2^53, exact as float64).
func counters(item map[string]any) map[string]int64 {
	out := map[string]int64{}
	for name, v := range item {
		if f, ok := v.(float64); ok {
			out[name] = int64(f)
		}
	}
	return out
}

// Window is a scope's trend over the days up to today.
type Window struct {
	Days   int
	Points []trendmath.Point   // the dense series, oldest first
	Fixes  trendmath.FixStats  // the window's fixes
	Open   trendmath.ByUrgency // open issues now
}

// Window reads a scope's trend over the last days (today, by the table's
// clock, included): the window's day records and the totals.
func (tr *Trends) Window(ctx context.Context, companyID, projectID int64, days int) (Window, error) {
	today := tr.t.Clock()
	if days < trendmath.MinDays || days > trendmath.MaxDays {
		return Window{}, trendmath.ErrDays
	}
	snap, err := tr.Snapshot(ctx, companyID, projectID, trendmath.Date(today.AddDate(0, 0, 1-days)))
	if err != nil {
		return Window{}, err
	}
	points, err := trendmath.Series(snap.Days, snap.Totals.Open, today, days)
	if err != nil {
		return Window{}, err
	}
	fixes, err := trendmath.FixesIn(snap.Days, today, days)
	if err != nil {
		return Window{}, err
	}
	return Window{Days: days, Points: points, Fixes: fixes, Open: snap.Totals.Open}, nil
}
