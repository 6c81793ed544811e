package trendmath_test

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/trendmath"
)

func TestSeries(t *testing.T) {
	today := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	recs := []trendmath.Day{
		{Date: "2026-03-04", Opened: 9, Net: trendmath.ByUrgency{9, 0, 0, 0}}, // before the window: ignored
		{Date: "2026-03-07", Opened: 4, Net: trendmath.ByUrgency{2, 2, 0, 0}},
		{Date: "2026-03-09", Fixed: 2, Reopened: 1, Dismissed: 1, Net: trendmath.ByUrgency{-1, -1, 0, 0}},
		{Date: "2026-03-11", Opened: 1, Net: trendmath.ByUrgency{0, 0, 0, 1}}, // a writer's clock ahead
	}
	open := trendmath.ByUrgency{3, 5, 0, 1}
	got, err := trendmath.Series(recs, open, today, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []trendmath.Point{
		{Date: "2026-03-06", Open: trendmath.ByUrgency{2, 4, 0, 0}},
		{Date: "2026-03-07", Opened: 4, Open: trendmath.ByUrgency{4, 6, 0, 0}},
		{Date: "2026-03-08", Open: trendmath.ByUrgency{4, 6, 0, 0}},
		{Date: "2026-03-09", Fixed: 2, Reopened: 1, Dismissed: 1, Open: trendmath.ByUrgency{3, 5, 0, 0}},
		{Date: "2026-03-10", Open: trendmath.ByUrgency{3, 5, 0, 0}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Series\n got %+v\nwant %+v", got, want)
	}
	// A zone other than UTC: the window is still the UTC days.
	got, err = trendmath.Series(recs, open, today.In(time.FixedZone("W", -10*3600)), 1)
	if err != nil || !reflect.DeepEqual(got, want[4:]) {
		t.Errorf("one day: %+v, %v", got, err)
	}
	// No records: every day carries today's open counts.
	got, err = trendmath.Series(nil, open, today, 3)
	if err != nil || len(got) != 3 || got[0] != (trendmath.Point{Date: "2026-03-08", Open: open}) {
		t.Errorf("no records: %+v, %v", got, err)
	}
	for _, n := range []int{0, -1, 366} {
		if _, err := trendmath.Series(recs, open, today, n); !errors.Is(err, trendmath.ErrDays) {
			t.Errorf("days %d: %v", n, err)
		}
	}
	if _, err := trendmath.Series(append(recs, trendmath.Day{Date: "2026-03-07"}), open, today, 5); err == nil {
		t.Error("a day given twice: no error")
	}
	// The longest window crosses a leap day.
	got, err = trendmath.Series(nil, open, time.Date(2028, 12, 30, 0, 0, 0, 0, time.UTC), 365)
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
		{d0.Add(days(366)), trendmath.Over},
		{d0.Add(days(5000)), trendmath.Over},
	}
	for _, c := range cases {
		if got := trendmath.Bucket(d0, c.fixed); got != c.want {
			t.Errorf("Bucket(+%s) = %d, want %d", c.fixed.Sub(d0), got, c.want)
		}
	}
}

// hist makes a histogram of times to fix.
func hist(ds ...int) trendmath.Histogram {
	h := trendmath.Histogram{}
	for _, d := range ds {
		h[d]++
	}
	return h
}

func TestQuantile(t *testing.T) {
	cases := []struct {
		h           trendmath.Histogram
		median, p90 trendmath.Quantile
	}{
		// ten fixes: the median is the 5th, the p90 the 9th
		{hist(0, 1, 1, 2, 3, 5, 8, 13, 21, trendmath.Over), trendmath.Quantile{Days: 3}, trendmath.Quantile{Days: 21}},
		// eleven: ceil(5.5) = 6th and ceil(9.9) = 10th
		{hist(0, 1, 1, 2, 3, 5, 8, 13, 21, 30, trendmath.Over), trendmath.Quantile{Days: 5}, trendmath.Quantile{Days: 30}},
		{hist(7), trendmath.Quantile{Days: 7}, trendmath.Quantile{Days: 7}},
		{hist(4, 4, 4, 4, 4, 4, 4, 4, 4, 365), trendmath.Quantile{Days: 4}, trendmath.Quantile{Days: 4}},
		{hist(2, trendmath.Over, trendmath.Over), trendmath.Quantile{Days: trendmath.Over, Over: true}, trendmath.Quantile{Days: trendmath.Over, Over: true}},
		{trendmath.Histogram{0: 0, 9: 3, 1: 0}, trendmath.Quantile{Days: 9}, trendmath.Quantile{Days: 9}},
	}
	for _, c := range cases {
		f := trendmath.Fixes{Histogram: c.h}
		m, ok1 := f.Median()
		p, ok2 := f.P90()
		if !ok1 || !ok2 || m != c.median || p != c.p90 {
			t.Errorf("%v: median %+v p90 %+v, want %+v %+v", c.h, m, p, c.median, c.p90)
		}
	}
	h := hist(0, 1, 1, 2, 3, 5, 8, 13, 21, trendmath.Over)
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
	if _, ok := (trendmath.Histogram{}).Quantile(50); ok {
		t.Error("empty histogram answered")
	}
}

func TestFixesAndCompliance(t *testing.T) {
	today := time.Date(2026, 3, 10, 23, 59, 0, 0, time.UTC)
	recs := []trendmath.Day{
		{Date: "2026-03-01", WithinSLA: trendmath.ByUrgency{5, 0, 0, 0}, TimeToFix: [4]trendmath.Histogram{0: {1: 5}}}, // outside 7 days
		{Date: "2026-03-04", WithinSLA: trendmath.ByUrgency{1, 0, 0, 0}, TimeToFix: [4]trendmath.Histogram{0: {2: 1, 9: 1}, 1: {20: 2}}},
		{Date: "2026-03-10", WithinSLA: trendmath.ByUrgency{1, 1, 0, 0}, TimeToFix: [4]trendmath.Histogram{0: {3: 1}, 1: {31: 1, 12: 1}}},
		{Date: "2026-03-11", TimeToFix: [4]trendmath.Histogram{2: {1: 1}}}, // after today
	}
	s, err := trendmath.FixesIn(recs, today, 7)
	if err != nil {
		t.Fatal(err)
	}
	// CR: 2, 3, 9 days, two within; HI: 12, 20, 20, 31, one within.
	cr, hi := s.ByUrgency[0], s.ByUrgency[1]
	if cr.Fixed != 3 || cr.WithinSLA != 2 || hi.Fixed != 4 || hi.WithinSLA != 1 || s.ByUrgency[2].Fixed != 0 || s.All.Fixed != 7 || s.All.WithinSLA != 3 {
		t.Fatalf("fixes %+v", s)
	}
	check := func(name string, f trendmath.Fixes, median, p90 int) {
		t.Helper()
		m, _ := f.Median()
		p, _ := f.P90()
		if m != (trendmath.Quantile{Days: median}) || p != (trendmath.Quantile{Days: p90}) {
			t.Errorf("%s: median %+v p90 %+v, want %d %d", name, m, p, median, p90)
		}
	}
	check("CR", cr, 3, 9)
	check("HI", hi, 20, 31)
	check("all", s.All, 12, 31) // 2 3 9 12 20 20 31: 4th and 7th
	if _, ok := s.ByUrgency[3].Median(); ok {
		t.Error("LO has a median without fixes")
	}
	by, all := trendmath.SLACompliance(s, trendmath.ByUrgency{4, 10, 0, 6}, trendmath.ByUrgency{1, 5, 0, 0})
	if by[0] != (trendmath.Compliance{FixedWithinSLA: trendmath.Share{Part: 2, Of: 3}, OpenPastSLA: trendmath.Share{Part: 1, Of: 4}}) ||
		by[1] != (trendmath.Compliance{FixedWithinSLA: trendmath.Share{Part: 1, Of: 4}, OpenPastSLA: trendmath.Share{Part: 5, Of: 10}}) ||
		all != (trendmath.Compliance{FixedWithinSLA: trendmath.Share{Part: 3, Of: 7}, OpenPastSLA: trendmath.Share{Part: 6, Of: 20}}) {
		t.Errorf("compliance %+v %+v", by, all)
	}
	if r, ok := all.OpenPastSLA.Ratio(); !ok || r != 0.3 {
		t.Errorf("ratio %v %v", r, ok)
	}
	if _, ok := by[2].FixedWithinSLA.Ratio(); ok {
		t.Error("a share of nothing has a ratio")
	}
	if _, err := trendmath.FixesIn(recs, today, 400); !errors.Is(err, trendmath.ErrDays) {
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
		state    trendmath.State
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
	records := map[string]trendmath.Day{}
	var totals trendmath.ByUrgency
	var fixes []fix
	openAt := map[string]trendmath.ByUrgency{} // open counts at each day's end, counted from the issues
	for day := range 40 {
		for range 5 { // transactions of the day
			at := start.Add(days(day) + time.Duration(rng.IntN(86400))*time.Second)
			var deltas []trendmath.Day
			for range 1 + rng.IntN(4) {
				n := rng.IntN(len(issues))
				is := &issues[n]
				next := trendmath.State{Status: statuses[rng.IntN(len(statuses))], Urgency: trendmath.Urgencies[rng.IntN(4)]}
				if rng.IntN(10) == 0 {
					next = trendmath.State{} // deleted
				}
				if is.state.Status == "" {
					is.detected, is.due = at, at.Add(days(rng.IntN(20)))
				}
				c := trendmath.Change{From: is.state, To: next, At: at, Detected: is.detected, Due: is.due}
				d, err := c.Delta()
				if err != nil {
					t.Fatal(err)
				}
				deltas = append(deltas, d)
				if next.Status == "fixed" && is.state.Status != "fixed" {
					u := slices.Index(trendmath.Urgencies, next.Urgency)
					fixes = append(fixes, fix{trendmath.Date(at), u, trendmath.Bucket(is.detected, at), at.Before(is.due)})
				}
				is.state = next
			}
			for _, d := range trendmath.Merge(deltas) {
				r := records[d.Date]
				attrs := r.Attrs()
				for k, v := range d.Attrs() { // the ADDs
					attrs[k] += v
				}
				if r, err := trendmath.ParseDay(d.Date, attrs); err != nil {
					t.Fatal(err)
				} else {
					records[d.Date] = r
				}
				tot := trendmath.Totals{Open: totals}
				for k, v := range d.TotalsAttrs() {
					if k != "seq" {
						tot.Open[slices.Index(trendmath.Urgencies, k[len("open_"):])] += v
					}
				}
				totals = tot.Open
			}
		}
		var open trendmath.ByUrgency
		for _, is := range issues {
			if c, _ := trendmath.ClassOf(is.state.Status); c == trendmath.Open {
				open[slices.Index(trendmath.Urgencies, is.state.Urgency)]++
			}
		}
		openAt[trendmath.Date(start.Add(days(day)))] = open
	}
	today := start.Add(days(39))
	var recs []trendmath.Day
	for _, r := range records {
		recs = append(recs, r)
	}
	series, err := trendmath.Series(recs, totals, today, 30)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range series {
		if p.Open != openAt[p.Date] {
			t.Errorf("%s: open %v, counted %v", p.Date, p.Open, openAt[p.Date])
		}
	}
	stats, err := trendmath.FixesIn(recs, today, 30)
	if err != nil {
		t.Fatal(err)
	}
	var want trendmath.FixStats
	first := trendmath.Date(today.Add(-days(29)))
	for _, f := range fixes {
		if f.date < first {
			continue
		}
		for _, s := range []*trendmath.Fixes{&want.ByUrgency[f.u], &want.All} {
			if s.Histogram == nil {
				s.Histogram = trendmath.Histogram{}
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
			want.ByUrgency[u].Histogram = trendmath.Histogram{}
		}
	}
	if !reflect.DeepEqual(stats, want) {
		t.Errorf("fixes\n got %+v\nwant %+v", stats, want)
	}
}
