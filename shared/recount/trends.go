package recount

import (
	"context"
	"fmt"
	"slices"

	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/trendmath"
)

// checkTrends checks the trend records of the company and of every project
// (those with issues and those listed) against the issues, where the
// issues as they are now can tell: the open issues per urgency equal the
// totals and the sum of every day's net change; each fix has its time to
// fix; no urgency has more fixes within SLA than fixes; and the issues now
// fixed, dismissed and open are no more than the entries into those
// classes the days counted (an issue enters its class at least once;
// deletions take issues away, never entries).
func checkTrends(ctx context.Context, st Store, companyID int64, issues []findings.Issue) error {
	type now struct {
		open             trendmath.ByUrgency
		fixed, dismissed int64
	}
	want := map[int64]*now{0: {}}
	projects, err := st.Catalog.AllProjects(ctx, companyID)
	if err != nil {
		return err
	}
	for _, p := range projects {
		want[p.ID] = &now{}
	}
	for _, i := range issues {
		class, err := trendmath.ClassOf(i.Status)
		if err != nil {
			return err
		}
		u := slices.Index(trendmath.Urgencies, i.Urgency)
		for _, sc := range []int64{0, i.ProjectID} {
			if want[sc] == nil {
				want[sc] = &now{}
			}
			w := want[sc]
			switch class {
			case trendmath.Open:
				w.open[u]++
			case trendmath.Fixed:
				w.fixed++
			case trendmath.Dismissed:
				w.dismissed++
			}
		}
	}
	for sc, w := range want {
		snap, err := st.Trends.Snapshot(ctx, companyID, sc, "")
		if err != nil {
			return err
		}
		var net trendmath.ByUrgency
		var sum trendmath.Day
		for _, d := range snap.Days {
			var timed int64
			for u := range trendmath.Urgencies {
				net[u] += d.Net[u]
				timed += d.TimeToFix[u].Count()
				if d.WithinSLA[u] > d.TimeToFix[u].Count() {
					return fmt.Errorf("trend of scope %d, %s: %d %s fixes within SLA of %d", sc, d.Date, d.WithinSLA[u], trendmath.Urgencies[u], d.TimeToFix[u].Count())
				}
			}
			if timed != d.Fixed {
				return fmt.Errorf("trend of scope %d, %s: %d fixes, %d times to fix", sc, d.Date, d.Fixed, timed)
			}
			sum.Opened += d.Opened
			sum.Reopened += d.Reopened
			sum.Dismissed += d.Dismissed
			sum.Fixed += d.Fixed
		}
		switch {
		case snap.Totals.Open != w.open:
			return fmt.Errorf("trend of scope %d: open now %v, issues open %v", sc, snap.Totals.Open, w.open)
		case net != w.open:
			return fmt.Errorf("trend of scope %d: the days' net changes add up to %v, issues open %v", sc, net, w.open)
		case w.open.Sum() > sum.Opened+sum.Reopened:
			return fmt.Errorf("trend of scope %d: %d issues open, %d opened and %d reopened", sc, w.open.Sum(), sum.Opened, sum.Reopened)
		case w.dismissed > sum.Dismissed:
			return fmt.Errorf("trend of scope %d: %d issues dismissed, %d dismissals", sc, w.dismissed, sum.Dismissed)
		case w.fixed > sum.Fixed:
			return fmt.Errorf("trend of scope %d: %d issues fixed, %d fixes", sc, w.fixed, sum.Fixed)
		}
	}
	return nil
}
