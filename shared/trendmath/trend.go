// Package trendmath is the arithmetic of issue trends, free of storage: what
// one change of an issue's status or urgency adds to the per-day counters
// of its scopes (the company, the project), the dense series of the last
// N days, time to fix and SLA compliance over a window.
//
// A scope keeps two kinds of record, both moved only by unconditional
// atomic ADDs in the transaction that writes the issue (so concurrent
// writers never conflict and a retried transaction, conditional on the
// issue's version, adds nothing twice):
//
//   - a day record per UTC day that saw a change (see Day.Attrs): opened,
//     fixed, reopened, dismissed; net_<U>, the net change of the open
//     issues of urgency U that day; ttf_<U>_<D>, the fixes of urgency U
//     that took D whole days from first detection (D in 0..365, ttf_<U>_over
//     beyond); sla_<U>, the fixes of urgency U made before their deadline;
//   - one totals record (see Day.TotalsAttrs): open_<U>, the open issues
//     of urgency U now, and seq, the number of changes applied.
//
// An ADD cannot set an absolute value, so a day record holds the open
// counts as a net change and Series anchors them on the totals: the open
// count at the end of day D is the total now less the net changes of the
// days after D. Reading a trend of N days is N day records and the totals,
// never the issues. The day records and the totals form one snapshot when
// the totals' seq is the same read before and after the day records (every
// change adds to seq in the transaction that moves the days).
package trendmath

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/sla"
)

// Class is what a status counts as.
type Class int

// Classes. None is the class of an issue that does not exist (before its
// creation, after its deletion).
const (
	None Class = iota
	Open
	Fixed
	Dismissed
)

// ClassOf is the class of an issue status ("" is None).
func ClassOf(status string) (Class, error) {
	switch status {
	case "":
		return None, nil
	case "open", "fix_in_progress":
		return Open, nil
	case "fixed":
		return Fixed, nil
	case "false_positive", "accepted_risk", "duplicate", "suppressed":
		return Dismissed, nil
	}
	return None, fmt.Errorf("trend: unknown issue status %q", status)
}

// Urgencies are the urgency codes counted, in the order of a ByUrgency.
var Urgencies = sla.Urgencies

// ByUrgency holds one count per urgency, in the order of Urgencies.
type ByUrgency [4]int64

// Sum is the count over every urgency.
func (b ByUrgency) Sum() int64 { return b[0] + b[1] + b[2] + b[3] }

func urgencyIndex(u string) (int, error) {
	if n := slices.Index(Urgencies, u); n >= 0 {
		return n, nil
	}
	return 0, fmt.Errorf("trend: unknown urgency %q", u)
}

// Date is the UTC day of t, as day records are keyed: "2006-01-02".
func Date(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Day is one scope's counters for one UTC day, or (from Change.Delta) the
// increments one change adds to them.
type Day struct {
	Date      string // "2006-01-02"
	Opened    int64  // first detections, open
	Fixed     int64  // entries into fixed, from any other status
	Reopened  int64  // entries into open from fixed or a dismissed status
	Dismissed int64  // entries into a dismissed status from any other class
	// Net is the net change of the open issues per urgency.
	Net ByUrgency
	// WithinSLA counts the fixes, per urgency, made before their deadline.
	WithinSLA ByUrgency
	// TimeToFix holds, per urgency, the fixes by whole days from first
	// detection (nil when there are none).
	TimeToFix [4]Histogram
}

// IsZero reports whether d changes nothing.
func (d Day) IsZero() bool {
	if d.Opened != 0 || d.Fixed != 0 || d.Reopened != 0 || d.Dismissed != 0 || d.Net != (ByUrgency{}) || d.WithinSLA != (ByUrgency{}) {
		return false
	}
	for _, h := range d.TimeToFix {
		if h.Count() != 0 {
			return false
		}
	}
	return true
}

// add adds o's counts to d (whatever their dates).
func (d *Day) add(o Day) {
	d.Opened += o.Opened
	d.Fixed += o.Fixed
	d.Reopened += o.Reopened
	d.Dismissed += o.Dismissed
	for n := range Urgencies {
		d.Net[n] += o.Net[n]
		d.WithinSLA[n] += o.WithinSLA[n]
		for days, c := range o.TimeToFix[n] {
			if d.TimeToFix[n] == nil {
				d.TimeToFix[n] = Histogram{}
			}
			d.TimeToFix[n][days] += c
		}
	}
}

// State is an issue's status and urgency; the zero State is no issue.
type State struct {
	Status  string
	Urgency string
}

// Change is one write of an issue, as the write path sees it.
type Change struct {
	From, To State
	// At is when the change is written; its UTC day is the day counted.
	At time.Time
	// Detected is the first detection and Due its SLA deadline in
	// force at At; both are needed when the change enters fixed.
	Detected, Due time.Time
}

// Delta is what c adds to each of the scopes: counter increments
// for the day of c.At (zero when c moves no counter: a change of reason,
// assignee, or between two dismissed statuses). An unknown status or
// urgency, or a fix without its detection or deadline, is an error.
func (c Change) Delta() (Day, error) {
	from, err := ClassOf(c.From.Status)
	if err != nil {
		return Day{}, err
	}
	to, err := ClassOf(c.To.Status)
	if err != nil {
		return Day{}, err
	}
	d := Day{Date: Date(c.At)}
	if from == Open {
		u, err := urgencyIndex(c.From.Urgency)
		if err != nil {
			return Day{}, err
		}
		d.Net[u]--
	}
	var u int
	if to != None {
		if u, err = urgencyIndex(c.To.Urgency); err != nil {
			return Day{}, err
		}
	}
	if to == Open {
		d.Net[u]++
	}
	if from == to {
		return d, nil // an urgency change at most
	}
	switch to {
	case Open:
		if from == None {
			d.Opened = 1
		} else {
			d.Reopened = 1
		}
	case Fixed:
		if c.Detected.IsZero() || c.Due.IsZero() {
			return Day{}, errors.New("trend: a fix needs the issue's first detection and SLA deadline")
		}
		d.Fixed = 1
		d.TimeToFix[u] = Histogram{Bucket(c.Detected, c.At): 1}
		if c.At.Before(c.Due) {
			d.WithinSLA[u] = 1
		}
	case Dismissed:
		d.Dismissed = 1
	}
	return d, nil
}

// Merge sums deltas per day, most recent day last, leaving out the days
// whose sum is zero. One transaction may touch a record once: the store
// merges the deltas of the issues it writes together.
func Merge(deltas []Day) []Day {
	by := map[string]*Day{}
	for _, d := range deltas {
		m, ok := by[d.Date]
		if !ok {
			m = &Day{Date: d.Date}
			by[d.Date] = m
		}
		m.add(d)
	}
	out := make([]Day, 0, len(by))
	for _, m := range by {
		if !m.IsZero() {
			out = append(out, *m)
		}
	}
	slices.SortFunc(out, func(a, b Day) int { return strings.Compare(a.Date, b.Date) })
	return out
}

// SeqAttr is the totals record's count of changes applied.
const SeqAttr = "seq"

// Record attribute names.
const (
	attrOpened    = "opened"
	attrFixed     = "fixed"
	attrReopened  = "reopened"
	attrDismissed = "dismissed"
	prefixNet     = "net_"
	prefixSLA     = "sla_"
	prefixTTF     = "ttf_"
	prefixOpen    = "open_"
	attrSeq       = SeqAttr
	overName      = "over"
)

// Attrs are d's counters as day record attributes (the increments to ADD,
// when d is a delta); zero counters are left out.
func (d Day) Attrs() map[string]int64 {
	m := map[string]int64{}
	put := func(name string, v int64) {
		if v != 0 {
			m[name] = v
		}
	}
	put(attrOpened, d.Opened)
	put(attrFixed, d.Fixed)
	put(attrReopened, d.Reopened)
	put(attrDismissed, d.Dismissed)
	for n, u := range Urgencies {
		put(prefixNet+u, d.Net[n])
		put(prefixSLA+u, d.WithinSLA[n])
		for days, c := range d.TimeToFix[n] {
			put(ttfAttr(u, days), c)
		}
	}
	return m
}

// TotalsAttrs are the increments a delta d adds to its scope's totals
// record: the open counts' net change and one change to seq (nil when d
// changes nothing, and then nothing is written).
func (d Day) TotalsAttrs() map[string]int64 {
	if d.IsZero() {
		return nil
	}
	m := map[string]int64{attrSeq: 1}
	for n, u := range Urgencies {
		if d.Net[n] != 0 {
			m[prefixOpen+u] = d.Net[n]
		}
	}
	return m
}

func ttfAttr(urgency string, days int) string {
	if days == Over {
		return prefixTTF + urgency + "_" + overName
	}
	return prefixTTF + urgency + "_" + strconv.Itoa(days)
}

// ParseDay reads a day record: date is its day ("2006-01-02"), attrs its
// numeric attributes. Attributes that are not counters are ignored; a
// malformed counter name is an error.
func ParseDay(date string, attrs map[string]int64) (Day, error) {
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return Day{}, fmt.Errorf("trend: day record date %q: %w", date, err)
	}
	d := Day{Date: date}
	for name, v := range attrs {
		switch name {
		case attrOpened:
			d.Opened = v
		case attrFixed:
			d.Fixed = v
		case attrReopened:
			d.Reopened = v
		case attrDismissed:
			d.Dismissed = v
		default:
			if err := d.parseUrgencyAttr(name, v); err != nil {
				return Day{}, err
			}
		}
	}
	return d, nil
}

func (d *Day) parseUrgencyAttr(name string, v int64) error {
	for _, p := range []string{prefixNet, prefixSLA, prefixTTF} {
		rest, ok := strings.CutPrefix(name, p)
		if !ok {
			continue
		}
		u, bucket, _ := strings.Cut(rest, "_")
		n, err := urgencyIndex(u)
		if err != nil {
			return fmt.Errorf("trend: day record attribute %q: %w", name, err)
		}
		switch p {
		case prefixNet:
			d.Net[n] = v
		case prefixSLA:
			d.WithinSLA[n] = v
		default:
			days, err := parseBucket(bucket)
			if err != nil {
				return fmt.Errorf("trend: day record attribute %q: %w", name, err)
			}
			if d.TimeToFix[n] == nil {
				d.TimeToFix[n] = Histogram{}
			}
			d.TimeToFix[n][days] = v
		}
		return nil
	}
	return nil
}

func parseBucket(s string) (int, error) {
	if s == overName {
		return Over, nil
	}
	days, err := strconv.Atoi(s)
	if err != nil || days < 0 || days > MaxBucket || strconv.Itoa(days) != s {
		return 0, fmt.Errorf("bad time-to-fix bucket %q", s)
	}
	return days, nil
}

// Totals is a scope's totals record.
type Totals struct {
	Open ByUrgency // open issues now
	Seq  int64     // changes applied
}

// ParseTotals reads a totals record's numeric attributes (others are
// ignored; an open count of an unknown urgency is an error).
func ParseTotals(attrs map[string]int64) (Totals, error) {
	var t Totals
	for name, v := range attrs {
		if name == attrSeq {
			t.Seq = v
			continue
		}
		if u, ok := strings.CutPrefix(name, prefixOpen); ok {
			n, err := urgencyIndex(u)
			if err != nil {
				return Totals{}, fmt.Errorf("trend: totals attribute %q: %w", name, err)
			}
			t.Open[n] = v
		}
	}
	return t, nil
}
