package issuelists

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/tabledef"
	"github.com/acme/codescan-api/shared/trendmath"
)

// TrendWindow is a scope's trend over a window (see trends.Window) and its
// open issues past their SLA deadline now.
type TrendWindow struct {
	trends.Window
	// PastDue are the scope's open issues past their deadline now, per
	// urgency.
	PastDue trendmath.ByUrgency
}

// Trend reads the trend of the last days of a company (projectID 0) or of
// one of its projects: the window's day records and the totals, and a
// keys-only count of the due index's past-due range.
func (x *Lists) Trend(ctx context.Context, companyID, projectID int64, days int) (TrendWindow, error) {
	w, err := x.trends.Window(ctx, companyID, projectID, days)
	if err != nil {
		return TrendWindow{}, err
	}
	due, err := x.pastDue(ctx, companyID, projectID)
	return TrendWindow{Window: w, PastDue: due}, err
}

// pastDue counts the open issues of a company (projectID 0) or of one of
// its projects whose deadline (SLA start plus the urgency's days to fix)
// is not after now: the due index's range of SLA starts up to now less
// the days, pending or breached (a breach the SLA job raised under
// stricter settings may no longer be one). The range is the company's:
// the company's count is a COUNT query; a project's reads the range's
// keys and keeps those whose DueSK names the project (a filter cannot
// name an index key). Either way it reads the company's past-due keys
// (some 30 per 0.5 RCU), never the issues.
func (x *Lists) pastDue(ctx context.Context, companyID, projectID int64) (trendmath.ByUrgency, error) {
	st, _, err := x.catalog.SLASettings(ctx, companyID)
	if err != nil {
		return trendmath.ByUrgency{}, err
	}
	now := x.t.Clock()
	var out trendmath.ByUrgency
	for n, u := range trendmath.Urgencies {
		upTo := findings.DueUpTo(now.AddDate(0, 0, -st.DaysToFix[u]))
		for _, state := range []string{findings.DuePending, findings.DueBreached} {
			kc := expression.Key(tabledef.Due.PK).Equal(expression.Value(schema.DuePK(companyID, u, state))).
				And(expression.Key(tabledef.Due.SK).LessThanEqual(expression.Value(upTo)))
			c, err := x.countDue(ctx, kc, projectID)
			if err != nil {
				return trendmath.ByUrgency{}, err
			}
			out[n] += c
		}
	}
	return out, nil
}

// countDue counts the due index keys of kc's range, of one project unless
// projectID is 0.
func (x *Lists) countDue(ctx context.Context, kc expression.KeyConditionBuilder, projectID int64) (int64, error) {
	if projectID == 0 {
		return x.t.Count(ctx, tabledef.Due.Name, kc, nil)
	}
	part := schema.DueProject(projectID)
	var n int64
	err := ddb.EachIn(ctx, x.t, tabledef.Due.Name, kc, func(k struct {
		SK string `dynamodbav:"DueSK"`
	}) error {
		if strings.Contains(k.SK, part) {
			n++
		}
		return nil
	})
	return n, err
}
