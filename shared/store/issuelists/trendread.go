package issuelists

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/tabledef"
	"github.com/acme/codescan-api/shared/trend"
)

// TrendWindow is a scope's trend over a window (see trends.Window) and,
// company-wide, its open issues past their SLA deadline now.
type TrendWindow struct {
	trends.Window
	// PastDue are the open issues past their deadline now, per urgency;
	// nil for a project: the due index that counts them is the company's
	// (a project's share would mean reading its issues).
	PastDue *trend.ByUrgency
}

// Trend reads the trend of the last days of a company (projectID 0) or of
// one of its projects: the window's day records and the totals; for the
// company, a keys-only count of the due index's past-due range as well.
func (x *Lists) Trend(ctx context.Context, companyID, projectID int64, days int) (TrendWindow, error) {
	w, err := x.trends.Window(ctx, companyID, projectID, days)
	if err != nil || projectID != 0 {
		return TrendWindow{Window: w}, err
	}
	due, err := x.pastDue(ctx, companyID)
	return TrendWindow{Window: w, PastDue: &due}, err
}

// pastDue counts the company's open issues whose deadline (first detection
// plus the urgency's days to fix) is not after now: the due index's range
// of first detections up to now less the days, pending or breached (a
// breach the SLA job raised under stricter settings may no longer be one).
func (x *Lists) pastDue(ctx context.Context, companyID int64) (trend.ByUrgency, error) {
	st, _, err := x.catalog.SLASettings(ctx, companyID)
	if err != nil {
		return trend.ByUrgency{}, err
	}
	now := x.t.Clock()
	var out trend.ByUrgency
	for n, u := range trend.Urgencies {
		upTo := findings.DueUpTo(now.AddDate(0, 0, -st.DaysToFix[u]))
		for _, state := range []string{findings.DuePending, findings.DueBreached} {
			kc := expression.Key(tabledef.Due.PK).Equal(expression.Value(findings.DuePK(companyID, u, state))).
				And(expression.Key(tabledef.Due.SK).LessThanEqual(expression.Value(upTo)))
			c, err := x.t.Count(ctx, tabledef.Due.Name, kc)
			if err != nil {
				return trend.ByUrgency{}, err
			}
			out[n] += c
		}
	}
	return out, nil
}
