package trendmath

import (
	"fmt"
	"strconv"
	"time"
)

// Trend windows: the last N days, today included.
const (
	MinDays     = 1
	MaxDays     = 365
	DefaultDays = 90
)

// ErrDays answers a days parameter out of range.
var ErrDays = fmt.Errorf("days must be an integer from %d to %d", MinDays, MaxDays)

// ParseDays reads the days query parameter ("" is DefaultDays).
func ParseDays(s string) (int, error) {
	if s == "" {
		return DefaultDays, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, ErrDays
	}
	return n, checkDays(n)
}

func checkDays(n int) error {
	if n < MinDays || n > MaxDays {
		return ErrDays
	}
	return nil
}

// window is the first and last day of the n days up to today.
func window(today time.Time, n int) (first, last string) {
	t := today.UTC()
	return Date(t.AddDate(0, 0, 1-n)), Date(t)
}

// Point is one day of a dense series.
type Point struct {
	Date                               string
	Opened, Fixed, Reopened, Dismissed int64
	Open                               ByUrgency // open issues at the day's end
}

// Series is the dense trend of the n days up to today (UTC), oldest first:
// one point per day, a day without a record moving nothing (so its open
// counts carry forward). days are the scope's day records dated from the
// window's first day on, later ones included (a writer whose clock runs
// ahead); open is the scope's totals now, read in the same snapshot. A
// date given twice is an error, as is n out of range (ErrDays).
func Series(days []Day, open ByUrgency, today time.Time, n int) ([]Point, error) {
	if err := checkDays(n); err != nil {
		return nil, err
	}
	_, last := window(today, n)
	by := make(map[string]Day, len(days))
	after := open // the open counts at the end of the day being walked
	for _, d := range days {
		if _, dup := by[d.Date]; dup {
			return nil, fmt.Errorf("trend: day %s given twice", d.Date)
		}
		by[d.Date] = d
		if d.Date > last {
			for u := range Urgencies {
				after[u] -= d.Net[u]
			}
		}
	}
	out := make([]Point, n)
	t := today.UTC()
	for k := n - 1; k >= 0; k-- {
		date := Date(t.AddDate(0, 0, k-(n-1)))
		d := by[date]
		out[k] = Point{Date: date, Opened: d.Opened, Fixed: d.Fixed, Reopened: d.Reopened, Dismissed: d.Dismissed, Open: after}
		for u := range Urgencies {
			after[u] -= d.Net[u]
		}
	}
	return out, nil
}

// Histogram counts fixes by whole days from first detection to the fix:
// keys 0..MaxBucket, and Over for longer.
type Histogram map[int]int64

// Time-to-fix buckets: one per whole day up to MaxBucket, then one for
// every longer time.
const (
	MaxBucket = 365
	Over      = MaxBucket + 1
)

// Bucket is the time-to-fix bucket of an issue first detected at detected
// and fixed at fixed: whole days elapsed (rounded down; 0 when the fix's
// clock reads earlier), Over beyond MaxBucket.
func Bucket(detected, fixed time.Time) int {
	d := fixed.Sub(detected)
	if d < 0 {
		return 0
	}
	return int(min(d/(24*time.Hour), Over))
}

// Count is the number of fixes in h.
func (h Histogram) Count() int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	return n
}

// Quantile is a time to fix in whole days; Over means longer than
// MaxBucket days (Days is then Over).
type Quantile struct {
	Days int
	Over bool
}

// Quantile is the nearest-rank percentile p (1..100) of h: the fewest
// whole days within which at least p % of the fixes were made. The
// buckets are whole days, so it is exact for times to fix counted in
// whole days (rounded down), up to MaxBucket; a recount over the issues
// that floors each time to fix gets the same figure. ok is false when h
// is empty.
func (h Histogram) Quantile(p int) (q Quantile, ok bool) {
	n := h.Count()
	if n == 0 || p < 1 || p > 100 {
		return Quantile{}, false
	}
	rank := (int64(p)*n + 99) / 100 // ceil(p/100 * n), 1-based
	var seen int64
	for days := 0; days <= Over; days++ {
		if seen += h[days]; seen >= rank {
			return Quantile{Days: days, Over: days == Over}, true
		}
	}
	return Quantile{}, false // counts below zero: not a histogram the write path makes
}

// Fixes are the fixes of one urgency (or all) in a window.
type Fixes struct {
	Fixed     int64 // fixes made
	WithinSLA int64 // of them, made before their deadline
	Histogram Histogram
}

// Median and P90 are the fixes' nearest-rank median and 90th percentile
// times to fix (ok false without fixes).
func (f Fixes) Median() (Quantile, bool) { return f.Histogram.Quantile(50) }

// P90: see Median.
func (f Fixes) P90() (Quantile, bool) { return f.Histogram.Quantile(90) }

// WithinSLAShare is the share of the fixes made before their deadline.
func (f Fixes) WithinSLAShare() Share { return Share{Part: f.WithinSLA, Of: f.Fixed} }

// FixStats are a window's fixes per urgency and over all urgencies.
type FixStats struct {
	ByUrgency [4]Fixes
	All       Fixes
}

// FixesIn sums the fixes of the day records in the n days up to today
// (records outside the window are ignored; n out of range is ErrDays).
func FixesIn(days []Day, today time.Time, n int) (FixStats, error) {
	if err := checkDays(n); err != nil {
		return FixStats{}, err
	}
	first, last := window(today, n)
	var s FixStats
	s.All.Histogram = Histogram{}
	for u := range Urgencies {
		s.ByUrgency[u].Histogram = Histogram{}
	}
	for _, d := range days {
		if d.Date < first || d.Date > last {
			continue
		}
		for u := range Urgencies {
			f := &s.ByUrgency[u]
			f.WithinSLA += d.WithinSLA[u]
			s.All.WithinSLA += d.WithinSLA[u]
			for b, c := range d.TimeToFix[u] {
				f.Histogram[b] += c
				f.Fixed += c
				s.All.Histogram[b] += c
				s.All.Fixed += c
			}
		}
	}
	return s, nil
}

// Share is Part out of Of.
type Share struct{ Part, Of int64 }

// Ratio is the share in 0..1 (ok false when Of is 0).
func (s Share) Ratio() (r float64, ok bool) {
	if s.Of == 0 {
		return 0, false
	}
	return float64(s.Part) / float64(s.Of), true
}

// Compliance is a scope's SLA compliance for one urgency (or all): the
// fixes of a window made within their deadline, and the open issues now
// past theirs. Being past a deadline comes with time, not with a write, so
// OpenPastSLA is counted when asked (the store's due index), not kept by
// day.
type Compliance struct {
	FixedWithinSLA Share // fixes made before their deadline, of the window's fixes
	OpenPastSLA    Share // open issues past their deadline, of the open issues now
}

// SLACompliance combines a window's fixes with the open issues now (open,
// per urgency) and those of them past their deadline (pastDue), per
// urgency and over all.
func SLACompliance(f FixStats, open, pastDue ByUrgency) (byUrgency [4]Compliance, all Compliance) {
	for u := range Urgencies {
		byUrgency[u] = Compliance{FixedWithinSLA: f.ByUrgency[u].WithinSLAShare(), OpenPastSLA: Share{Part: pastDue[u], Of: open[u]}}
	}
	return byUrgency, Compliance{FixedWithinSLA: f.All.WithinSLAShare(), OpenPastSLA: Share{Part: pastDue.Sum(), Of: open.Sum()}}
}
