package trend_test

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/trend"
)

func TestSeries(t *testing.T) {
	today := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	recs := []trend.Day{
		{Date: "2026-03-04", Opened: 9, Net: trend.ByUrgency{9, 0, 0, 0}}, // before the window: ignored
		{Date: "2026-03-07", Opened: 4, Net: trend.ByUrgency{2, 2, 0, 0}},
		{Date: "2026-03-09", Fixed: 2, Reopened: 1, Dismissed: 1, Net: trend.ByUrgency{-1, -1, 0, 0}},
		{Date: "2026-03-11", Opened: 1, Net: trend.ByUrgency{0, 0, 0, 1}}, // a writer's clock ahead
	}
	open := trend.ByUrgency{3, 5, 0, 1}
	got, err := trend.Series(recs, open, today, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []trend.Point{
		{Date: "2026-03-06", Open: trend.ByUrgency{2, 4, 0, 0}},
		{Date: "2026-03-07", Opened: 4, Open: trend.ByUrgency{4, 6, 0, 0}},
		{Date: "2026-03-08", Open: trend.ByUrgency{4, 6, 0, 0}},
		{Date: "2026-03-09", Fixed: 2, Reopened: 1, Dismissed: 1, Open: trend.ByUrgency{3, 5, 0, 0}},
		{Date: "2026-03-10", Open: trend.ByUrgency{3, 5, 0, 0}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Series\n got %+v\nwant %+v", got, want)
	}
	// A zone other than UTC: the window is still the UTC days.
	got, err = trend.Series(recs, open, today.In(time.FixedZone("W", -10*3600)), 1)
	if err != nil || !reflect.DeepEqual(got, want[4:]) {
		t.Errorf("one day: %+v, %v", got, err)
	}
	// No records: every day carries today's open counts.
	got, err = trend.Series(nil, open, today, 3)
	if err != nil || len(got) != 3 || got[0] != (trend.Point{Date: "2026-03-08", Open: open}) {
		t.Errorf("no records: %+v, %v", got, err)
	}
	for _, n := range []int{0, -1, 366} {
		if _, err := trend.Series(recs, open, today, n); !errors.Is(err, trend.ErrDays) {
			t.Errorf("days %d: %v", n, err)
		}
	}
	if _, err := trend.Series(append(recs, trend.Day{Date: "2026-03-07"}), open, today, 5); err == nil {
		t.Error("a day given twice: no error")
	}
	// The longest window crosses a leap day.
	got, err = trend.Series(nil, open, time.Date(2028, 12, 30, 0, 0, 0, 0, time.UTC), 365)
	if err != nil || got[0].Date != "2028-01-01" || got[59].Date != "2028-02-29" || got[364].Date != "2028-12-30" {
		t.Errorf("365 days: %v %v %v, %v", got[0].Date, got[59].Date, got[364].Date, err)
	}
}

func TestBucket(t *testing.T) {
	d0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		fixed time.Time
		want  int
	}{
		{d0.Add(-time.Hour), 0},
		{d0, 0},
		{d0.Add(days(1) - time.Nanosecond), 0},
		{d0.Add(days(1)), 1},
		{d0.Add(days(365) + 23*time.Hour), 365},
		{d0.Add(days(366)), trend.Over},
		{d0.Add(days(5000)), trend.Over},
	}
	for _, c := range cases {
		if got := trend.Bucket(d0, c.fixed); got != c.want {
			t.Errorf("Bucket(+%s) = %d, want %d", c.fixed.Sub(d0), got, c.want)
		}
	}
}

// hist makes a histogram of times to fix.
func hist(ds ...int) trend.Histogram {
	h := trend.Histogram{}
	for _, d := range ds {
		h[d]++
	}
	return h
}

func TestQuantile(t *testing.T) {
	cases := []struct {
		h           trend.Histogram
		median, p90 trend.Quantile
	}{
		// ten fixes: the median is the 5th, the p90 the 9th
		{hist(0, 1, 1, 2, 3, 5, 8, 13, 21, trend.Over), trend.Quantile{Days: 3}, trend.Quantile{Days: 21}},
		// eleven: ceil(5.5) = 6th and ceil(9.9) = 10th
		{hist(0, 1, 1, 2, 3, 5, 8, 13, 21, 30, trend.Over), trend.Quantile{Days: 5}, trend.Quantile{Days: 30}},
		{hist(7), trend.Quantile{Days: 7}, trend.Quantile{Days: 7}},
		{hist(4, 4, 4, 4, 4, 4, 4, 4, 4, 365), trend.Quantile{Days: 4}, trend.Quantile{Days: 4}},
		{hist(2, trend.Over, trend.Over), trend.Quantile{Days: trend.Over, Over: true}, trend.Quantile{Days: trend.Over, Over: true}},
		{trend.Histogram{0: 0, 9: 3, 1: 0}, trend.Quantile{Days: 9}, trend.Quantile{Days: 9}},
	}
	for _, c := range cases {
		f := trend.Fixes{Histogram: c.h}
		m, ok1 := f.Median()
		p, ok2 := f.P90()
		if !ok1 || !ok2 || m != c.median || p != c.p90 {
			t.Errorf("%v: median %+v p90 %+v, want %+v %+v", c.h, m, p, c.median, c.p90)
		}
	}
	h := hist(0, 1, 1, 2, 3, 5, 8, 13, 21, trend.Over)
	if q, ok := h.Quantile(100); !ok || !q.Over {
		t.Errorf("p100 %+v", q)
	}
	if q, ok := h.Quantile(1); !ok || q.Days != 0 {
		t.Errorf("p1 %+v", q)
	}
	for _, p := range []int{0, 101} {
		if _, ok := h.Quantile(p); ok {
			t.Errorf("p%d answered", p)
		}
	}
	if _, ok := (trend.Histogram{}).Quantile(50); ok {
		t.Error("empty histogram answered")
	}
}

func TestFixesAndCompliance(t *testing.T) {
	today := time.Date(2026, 3, 10, 23, 59, 0, 0, time.UTC)
	recs := []trend.Day{
		{Date: "2026-03-01", WithinSLA: trend.ByUrgency{5, 0, 0, 0}, TimeToFix: [4]trend.Histogram{0: {1: 5}}}, // outside 7 days
		{Date: "2026-03-04", WithinSLA: trend.ByUrgency{1, 0, 0, 0}, TimeToFix: [4]trend.Histogram{0: {2: 1, 9: 1}, 1: {20: 2}}},
		{Date: "2026-03-10", WithinSLA: trend.ByUrgency{1, 1, 0, 0}, TimeToFix: [4]trend.Histogram{0: {3: 1}, 1: {31: 1, 12: 1}}},
		{Date: "2026-03-11", TimeToFix: [4]trend.Histogram{2: {1: 1}}}, // after today
	}
	s, err := trend.FixesIn(recs, today, 7)
	if err != nil {
		t.Fatal(err)
	}
	// CR: 2, 3, 9 days, two within; HI: 12, 20, 20, 31, one within.
	cr, hi := s.ByUrgency[0], s.ByUrgency[1]
	if cr.Fixed != 3 || cr.WithinSLA != 2 || hi.Fixed != 4 || hi.WithinSLA != 1 || s.ByUrgency[2].Fixed != 0 || s.All.Fixed != 7 || s.All.WithinSLA != 3 {
		t.Fatalf("fixes %+v", s)
	}
	check := func(name string, f trend.Fixes, median, p90 int) {
		t.Helper()
		m, _ := f.Median()
		p, _ := f.P90()
		if m != (trend.Quantile{Days: median}) || p != (trend.Quantile{Days: p90}) {
			t.Errorf("%s: median %+v p90 %+v, want %d %d", name, m, p, median, p90)
		}
	}
	check("CR", cr, 3, 9)
	check("HI", hi, 20, 31)
	check("all", s.All, 12, 31) // 2 3 9 12 20 20 31: 4th and 7th
	if _, ok := s.ByUrgency[3].Median(); ok {
		t.Error("LO has a median without fixes")
	}
	by, all := trend.SLACompliance(s, trend.ByUrgency{4, 10, 0, 6}, trend.ByUrgency{1, 5, 0, 0})
	if by[0] != (trend.Compliance{FixedWithinSLA: trend.Share{Part: 2, Of: 3}, OpenPastSLA: trend.Share{Part: 1, Of: 4}}) ||
		by[1] != (trend.Compliance{FixedWithinSLA: trend.Share{Part: 1, Of: 4}, OpenPastSLA: trend.Share{Part: 5, Of: 10}}) ||
		all != (trend.Compliance{FixedWithinSLA: trend.Share{Part: 3, Of: 7}, OpenPastSLA: trend.Share{Part: 6, Of: 20}}) {
		t.Errorf("compliance %+v %+v", by, all)
	}
	if r, ok := all.OpenPastSLA.Ratio(); !ok || r != 0.3 {
		t.Errorf("ratio %v %v", r, ok)
	}
	if _, ok := by[2].FixedWithinSLA.Ratio(); ok {
		t.Error("a share of nothing has a ratio")
	}
	if _, err := trend.FixesIn(recs, today, 400); !errors.Is(err, trend.ErrDays) {
		t.Errorf("days 400: %v", err)
	}
}

// TestReplay drives random changes of 60 issues through 40 days, merges
// each "transaction"'s deltas as the store would, and checks the series
// and the fixes against figures counted from the issues themselves.
func TestReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	statuses := []string{"open", "fix_in_progress", "fixed", "false_positive", "accepted_risk", "duplicate", "suppressed"}
	type issue struct {
		state    trend.State
		detected time.Time
		due      time.Time
	}
	type fix struct {
		date   string
		u      int
		bucket int
		within bool
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	issues := make([]issue, 60)
	records := map[string]trend.Day{}
	var totals trend.ByUrgency
	var fixes []fix
	openAt := map[string]trend.ByUrgency{} // open counts at each day's end, counted from the issues
	for day := range 40 {
		for range 5 { // transactions of the day
			at := start.Add(days(day) + time.Duration(rng.IntN(86400))*time.Second)
			var deltas []trend.Day
			for range 1 + rng.IntN(4) {
				n := rng.IntN(len(issues))
				is := &issues[n]
				next := trend.State{Status: statuses[rng.IntN(len(statuses))], Urgency: trend.Urgencies[rng.IntN(4)]}
				if rng.IntN(10) == 0 {
					next = trend.State{} // deleted
				}
				if is.state.Status == "" {
					is.detected, is.due = at, at.Add(days(rng.IntN(20)))
				}
				c := trend.Change{From: is.state, To: next, At: at, Detected: is.detected, Due: is.due}
				d, err := c.Delta()
				if err != nil {
					t.Fatal(err)
				}
				deltas = append(deltas, d)
				if next.Status == "fixed" && is.state.Status != "fixed" {
					u := slices.Index(trend.Urgencies, next.Urgency)
					fixes = append(fixes, fix{trend.Date(at), u, trend.Bucket(is.detected, at), at.Before(is.due)})
				}
				is.state = next
			}
			for _, d := range trend.Merge(deltas) {
				r := records[d.Date]
				attrs := r.Attrs()
				for k, v := range d.Attrs() { // the ADDs
					attrs[k] += v
				}
				if r, err := trend.ParseDay(d.Date, attrs); err != nil {
					t.Fatal(err)
				} else {
					records[d.Date] = r
				}
				tot := trend.Totals{Open: totals}
				for k, v := range d.TotalsAttrs() {
					if k != "seq" {
						tot.Open[slices.Index(trend.Urgencies, k[len("open_"):])] += v
					}
				}
				totals = tot.Open
			}
		}
		var open trend.ByUrgency
		for _, is := range issues {
			if c, _ := trend.ClassOf(is.state.Status); c == trend.Open {
				open[slices.Index(trend.Urgencies, is.state.Urgency)]++
			}
		}
		openAt[trend.Date(start.Add(days(day)))] = open
	}
	today := start.Add(days(39))
	var recs []trend.Day
	for _, r := range records {
		recs = append(recs, r)
	}
	series, err := trend.Series(recs, totals, today, 30)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range series {
		if p.Open != openAt[p.Date] {
			t.Errorf("%s: open %v, counted %v", p.Date, p.Open, openAt[p.Date])
		}
	}
	stats, err := trend.FixesIn(recs, today, 30)
	if err != nil {
		t.Fatal(err)
	}
	var want trend.FixStats
	first := trend.Date(today.Add(-days(29)))
	for _, f := range fixes {
		if f.date < first {
			continue
		}
		for _, s := range []*trend.Fixes{&want.ByUrgency[f.u], &want.All} {
			if s.Histogram == nil {
				s.Histogram = trend.Histogram{}
			}
			s.Fixed++
			s.Histogram[f.bucket]++
			if f.within {
				s.WithinSLA++
			}
		}
	}
	if len(fixes) < 20 || want.All.Fixed == 0 {
		t.Fatalf("the replay fixed too little: %d", len(fixes))
	}
	for u := range 4 {
		if want.ByUrgency[u].Histogram == nil {
			want.ByUrgency[u].Histogram = trend.Histogram{}
		}
	}
	if !reflect.DeepEqual(stats, want) {
		t.Errorf("fixes\n got %+v\nwant %+v", stats, want)
	}
}
