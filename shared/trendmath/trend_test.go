package trendmath_test

import (
	"errors"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/trendmath"
)

var at = time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)

func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

func TestClassOf(t *testing.T) {
	want := map[string]trendmath.Class{
		"": trendmath.None, "open": trendmath.Open, "fix_in_progress": trendmath.Open, "fixed": trendmath.Fixed,
		"false_positive": trendmath.Dismissed, "accepted_risk": trendmath.Dismissed, "duplicate": trendmath.Dismissed, "suppressed": trendmath.Dismissed,
	}
	for s, c := range want {
		if got, err := trendmath.ClassOf(s); err != nil || got != c {
			t.Errorf("ClassOf(%q) = %v, %v; want %v", s, got, err, c)
		}
	}
	if _, err := trendmath.ClassOf("Open"); err == nil {
		t.Error("ClassOf(Open): no error")
	}
}

func TestDelta(t *testing.T) {
	st := func(s, u string) trendmath.State { return trendmath.State{Status: s, Urgency: u} }
	none := trendmath.State{}
	cases := []struct {
		name string
		c    trendmath.Change
		want trendmath.Day
	}{
		{"first detection", trendmath.Change{To: st("open", "HI"), At: at},
			trendmath.Day{Date: "2026-03-10", Opened: 1, Net: trendmath.ByUrgency{0, 1, 0, 0}}},
		{"urgency raised", trendmath.Change{From: st("open", "HI"), To: st("open", "CR"), At: at},
			trendmath.Day{Date: "2026-03-10", Net: trendmath.ByUrgency{1, -1, 0, 0}}},
		{"urgency raised while dismissed", trendmath.Change{From: st("duplicate", "HI"), To: st("duplicate", "CR"), At: at},
			trendmath.Day{Date: "2026-03-10"}},
		{"fixed within SLA", trendmath.Change{From: st("open", "ME"), To: st("fixed", "ME"), At: at,
			Detected: at.Add(-days(10) - 5*time.Hour), Due: at.Add(days(80))},
			trendmath.Day{Date: "2026-03-10", Fixed: 1, Net: trendmath.ByUrgency{0, 0, -1, 0}, WithinSLA: trendmath.ByUrgency{0, 0, 1, 0},
				TimeToFix: [4]trendmath.Histogram{2: {10: 1}}}},
		{"fixed late", trendmath.Change{From: st("fix_in_progress", "CR"), To: st("fixed", "CR"), At: at,
			Detected: at.Add(-days(8)), Due: at.Add(-days(1))},
			trendmath.Day{Date: "2026-03-10", Fixed: 1, Net: trendmath.ByUrgency{-1, 0, 0, 0}, TimeToFix: [4]trendmath.Histogram{0: {8: 1}}}},
		{"fixed at the deadline is late", trendmath.Change{From: st("open", "LO"), To: st("fixed", "LO"), At: at,
			Detected: at.Add(-days(180)), Due: at},
			trendmath.Day{Date: "2026-03-10", Fixed: 1, Net: trendmath.ByUrgency{0, 0, 0, -1}, TimeToFix: [4]trendmath.Histogram{3: {180: 1}}}},
		{"fixed after more than a year", trendmath.Change{From: st("open", "LO"), To: st("fixed", "LO"), At: at,
			Detected: at.Add(-days(400)), Due: at.Add(-days(220))},
			trendmath.Day{Date: "2026-03-10", Fixed: 1, Net: trendmath.ByUrgency{0, 0, 0, -1}, TimeToFix: [4]trendmath.Histogram{3: {trendmath.Over: 1}}}},
		{"dismissed fixed", trendmath.Change{From: st("accepted_risk", "HI"), To: st("fixed", "HI"), At: at,
			Detected: at.Add(-time.Hour), Due: at.Add(days(30))},
			trendmath.Day{Date: "2026-03-10", Fixed: 1, WithinSLA: trendmath.ByUrgency{0, 1, 0, 0}, TimeToFix: [4]trendmath.Histogram{1: {0: 1}}}},
		{"reopened by a scan", trendmath.Change{From: st("fixed", "HI"), To: st("open", "HI"), At: at},
			trendmath.Day{Date: "2026-03-10", Reopened: 1, Net: trendmath.ByUrgency{0, 1, 0, 0}}},
		{"acceptance expired", trendmath.Change{From: st("accepted_risk", "ME"), To: st("open", "ME"), At: at},
			trendmath.Day{Date: "2026-03-10", Reopened: 1, Net: trendmath.ByUrgency{0, 0, 1, 0}}},
		{"suppression removed, urgency changed", trendmath.Change{From: st("suppressed", "LO"), To: st("open", "HI"), At: at},
			trendmath.Day{Date: "2026-03-10", Reopened: 1, Net: trendmath.ByUrgency{0, 1, 0, 0}}},
		{"marked false positive", trendmath.Change{From: st("open", "CR"), To: st("false_positive", "CR"), At: at},
			trendmath.Day{Date: "2026-03-10", Dismissed: 1, Net: trendmath.ByUrgency{-1, 0, 0, 0}}},
		{"fixed marked duplicate", trendmath.Change{From: st("fixed", "ME"), To: st("duplicate", "ME"), At: at},
			trendmath.Day{Date: "2026-03-10", Dismissed: 1}},
		{"arrives suppressed", trendmath.Change{To: st("suppressed", "ME"), At: at},
			trendmath.Day{Date: "2026-03-10", Dismissed: 1}},
		{"between dismissed statuses", trendmath.Change{From: st("false_positive", "HI"), To: st("accepted_risk", "HI"), At: at},
			trendmath.Day{Date: "2026-03-10"}},
		{"open to fix in progress", trendmath.Change{From: st("open", "HI"), To: st("fix_in_progress", "HI"), At: at},
			trendmath.Day{Date: "2026-03-10"}},
		{"open deleted", trendmath.Change{From: st("open", "ME"), To: none, At: at},
			trendmath.Day{Date: "2026-03-10", Net: trendmath.ByUrgency{0, 0, -1, 0}}},
		{"fixed deleted", trendmath.Change{From: st("fixed", "ME"), To: none, At: at}, trendmath.Day{Date: "2026-03-10"}},
		{"the UTC day counts", trendmath.Change{To: st("open", "LO"), At: time.Date(2026, 3, 10, 21, 0, 0, 0, time.FixedZone("EST", -5*3600))},
			trendmath.Day{Date: "2026-03-11", Opened: 1, Net: trendmath.ByUrgency{0, 0, 0, 1}}},
	}
	for _, c := range cases {
		got, err := c.c.Delta()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
		if got.IsZero() != (got.TotalsAttrs() == nil) {
			t.Errorf("%s: IsZero %v, totals %v", c.name, got.IsZero(), got.TotalsAttrs())
		}
	}
	bad := []trendmath.Change{
		{From: st("open", "HI"), To: st("closed", "HI"), At: at},
		{From: st("reopened", "HI"), To: st("open", "HI"), At: at},
		{To: st("open", "critical"), At: at},
		{From: st("open", ""), To: st("fixed", "HI"), At: at, Detected: at, Due: at},
		{From: st("open", "HI"), To: st("fixed", "HI"), At: at, Due: at},
		{From: st("open", "HI"), To: st("fixed", "HI"), At: at, Detected: at},
	}
	for _, c := range bad {
		if d, err := c.Delta(); err == nil {
			t.Errorf("%+v: no error, %+v", c, d)
		}
	}
}

func TestAttrs(t *testing.T) {
	d := trendmath.Day{Date: "2026-03-10", Opened: 3, Fixed: 4, Dismissed: 1, Net: trendmath.ByUrgency{2, 0, -4, 0},
		WithinSLA: trendmath.ByUrgency{0, 1, 2, 0},
		TimeToFix: [4]trendmath.Histogram{1: {0: 1}, 2: {12: 2, 365: 1, trendmath.Over: 1}}}
	want := map[string]int64{"opened": 3, "fixed": 4, "dismissed": 1, "net_CR": 2, "net_ME": -4, "sla_HI": 1, "sla_ME": 2,
		"ttf_HI_0": 1, "ttf_ME_12": 2, "ttf_ME_365": 1, "ttf_ME_over": 1}
	got := d.Attrs()
	if !maps.Equal(got, want) {
		t.Errorf("Attrs\n got %v\nwant %v", got, want)
	}
	if tot := d.TotalsAttrs(); !maps.Equal(tot, map[string]int64{"seq": 1, "open_CR": 2, "open_ME": -4}) {
		t.Errorf("TotalsAttrs %v", tot)
	}
	// A stored record carries its keys and other attributes too.
	got["ver"] = 7
	back, err := trendmath.ParseDay("2026-03-10", got)
	if err != nil || !reflect.DeepEqual(back, d) {
		t.Errorf("ParseDay: %v\n got %+v\nwant %+v", err, back, d)
	}
	if len((trendmath.Day{Date: "2026-03-10"}).Attrs()) != 0 {
		t.Error("a zero day has attributes")
	}
	for _, c := range []struct {
		date string
		name string
	}{
		{"2026-3-10", "opened"}, {"", "opened"}, {"2026-03-10", "ttf_XX_1"}, {"2026-03-10", "ttf_CR_366"},
		{"2026-03-10", "ttf_CR_01"}, {"2026-03-10", "ttf_CR_-1"}, {"2026-03-10", "ttf_CR"}, {"2026-03-10", "net_critical"},
		{"2026-03-10", "sla_"},
	} {
		if _, err := trendmath.ParseDay(c.date, map[string]int64{c.name: 1}); err == nil {
			t.Errorf("ParseDay(%q, %s): no error", c.date, c.name)
		}
	}
	tot, err := trendmath.ParseTotals(map[string]int64{"seq": 12, "open_CR": 3, "open_LO": 9, "ver": 1})
	if err != nil || tot != (trendmath.Totals{Open: trendmath.ByUrgency{3, 0, 0, 9}, Seq: 12}) {
		t.Errorf("ParseTotals: %+v, %v", tot, err)
	}
	if _, err := trendmath.ParseTotals(map[string]int64{"open_XX": 1}); err == nil {
		t.Error("ParseTotals(open_XX): no error")
	}
}

func TestMerge(t *testing.T) {
	in := []trendmath.Day{
		{Date: "2026-03-10", Opened: 1, Net: trendmath.ByUrgency{1, 0, 0, 0}},
		{Date: "2026-03-09", Fixed: 1, Net: trendmath.ByUrgency{0, -1, 0, 0}, TimeToFix: [4]trendmath.Histogram{1: {3: 1}}},
		{Date: "2026-03-10", Dismissed: 1, Net: trendmath.ByUrgency{-1, 0, 0, 0}},
		{Date: "2026-03-09", Fixed: 1, Net: trendmath.ByUrgency{0, -1, 0, 0}, WithinSLA: trendmath.ByUrgency{0, 1, 0, 0}, TimeToFix: [4]trendmath.Histogram{1: {3: 1}}},
		{Date: "2026-03-08", Net: trendmath.ByUrgency{1, 0, 0, 0}},
		{Date: "2026-03-08", Net: trendmath.ByUrgency{-1, 0, 0, 0}},
	}
	want := []trendmath.Day{
		{Date: "2026-03-09", Fixed: 2, Net: trendmath.ByUrgency{0, -2, 0, 0}, WithinSLA: trendmath.ByUrgency{0, 1, 0, 0}, TimeToFix: [4]trendmath.Histogram{1: {3: 2}}},
		{Date: "2026-03-10", Opened: 1, Dismissed: 1},
	}
	if got := trendmath.Merge(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Merge\n got %+v\nwant %+v", got, want)
	}
}

func TestParseDays(t *testing.T) {
	for s, want := range map[string]int{"": 90, "1": 1, "30": 30, "365": 365} {
		if n, err := trendmath.ParseDays(s); err != nil || n != want {
			t.Errorf("ParseDays(%q) = %d, %v", s, n, err)
		}
	}
	for _, s := range []string{"0", "366", "-5", "abc", " 9", "9.0", "1e2", "99999999999999999999"} {
		if _, err := trendmath.ParseDays(s); !errors.Is(err, trendmath.ErrDays) {
			t.Errorf("ParseDays(%q): %v", s, err)
		}
	}
	if trendmath.ErrDays.Error() != "days must be an integer from 1 to 365" {
		t.Errorf("message %q", trendmath.ErrDays)
	}
}
