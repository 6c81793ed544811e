package trend_test

import (
	"errors"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/trend"
)

var at = time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)

func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

func TestClassOf(t *testing.T) {
	want := map[string]trend.Class{
		"": trend.None, "open": trend.Open, "fix_in_progress": trend.Open, "fixed": trend.Fixed,
		"false_positive": trend.Dismissed, "accepted_risk": trend.Dismissed, "duplicate": trend.Dismissed, "suppressed": trend.Dismissed,
	}
	for s, c := range want {
		if got, err := trend.ClassOf(s); err != nil || got != c {
			t.Errorf("ClassOf(%q) = %v, %v; want %v", s, got, err, c)
		}
	}
	if _, err := trend.ClassOf("Open"); err == nil {
		t.Error("ClassOf(Open): no error")
	}
}

func TestDelta(t *testing.T) {
	st := func(s, u string) trend.State { return trend.State{Status: s, Urgency: u} }
	none := trend.State{}
	cases := []struct {
		name string
		c    trend.Change
		want trend.Day
	}{
		{"first detection", trend.Change{To: st("open", "HI"), At: at},
			trend.Day{Date: "2026-03-10", Opened: 1, Net: trend.ByUrgency{0, 1, 0, 0}}},
		{"urgency raised", trend.Change{From: st("open", "HI"), To: st("open", "CR"), At: at},
			trend.Day{Date: "2026-03-10", Net: trend.ByUrgency{1, -1, 0, 0}}},
		{"urgency raised while dismissed", trend.Change{From: st("duplicate", "HI"), To: st("duplicate", "CR"), At: at},
			trend.Day{Date: "2026-03-10"}},
		{"fixed within SLA", trend.Change{From: st("open", "ME"), To: st("fixed", "ME"), At: at,
			Detected: at.Add(-days(10) - 5*time.Hour), Due: at.Add(days(80))},
			trend.Day{Date: "2026-03-10", Fixed: 1, Net: trend.ByUrgency{0, 0, -1, 0}, WithinSLA: trend.ByUrgency{0, 0, 1, 0},
				TimeToFix: [4]trend.Histogram{2: {10: 1}}}},
		{"fixed late", trend.Change{From: st("fix_in_progress", "CR"), To: st("fixed", "CR"), At: at,
			Detected: at.Add(-days(8)), Due: at.Add(-days(1))},
			trend.Day{Date: "2026-03-10", Fixed: 1, Net: trend.ByUrgency{-1, 0, 0, 0}, TimeToFix: [4]trend.Histogram{0: {8: 1}}}},
		{"fixed at the deadline is late", trend.Change{From: st("open", "LO"), To: st("fixed", "LO"), At: at,
			Detected: at.Add(-days(180)), Due: at},
			trend.Day{Date: "2026-03-10", Fixed: 1, Net: trend.ByUrgency{0, 0, 0, -1}, TimeToFix: [4]trend.Histogram{3: {180: 1}}}},
		{"fixed after more than a year", trend.Change{From: st("open", "LO"), To: st("fixed", "LO"), At: at,
			Detected: at.Add(-days(400)), Due: at.Add(-days(220))},
			trend.Day{Date: "2026-03-10", Fixed: 1, Net: trend.ByUrgency{0, 0, 0, -1}, TimeToFix: [4]trend.Histogram{3: {trend.Over: 1}}}},
		{"dismissed fixed", trend.Change{From: st("accepted_risk", "HI"), To: st("fixed", "HI"), At: at,
			Detected: at.Add(-time.Hour), Due: at.Add(days(30))},
			trend.Day{Date: "2026-03-10", Fixed: 1, WithinSLA: trend.ByUrgency{0, 1, 0, 0}, TimeToFix: [4]trend.Histogram{1: {0: 1}}}},
		{"reopened by a scan", trend.Change{From: st("fixed", "HI"), To: st("open", "HI"), At: at},
			trend.Day{Date: "2026-03-10", Reopened: 1, Net: trend.ByUrgency{0, 1, 0, 0}}},
		{"acceptance expired", trend.Change{From: st("accepted_risk", "ME"), To: st("open", "ME"), At: at},
			trend.Day{Date: "2026-03-10", Reopened: 1, Net: trend.ByUrgency{0, 0, 1, 0}}},
		{"suppression removed, urgency changed", trend.Change{From: st("suppressed", "LO"), To: st("open", "HI"), At: at},
			trend.Day{Date: "2026-03-10", Reopened: 1, Net: trend.ByUrgency{0, 1, 0, 0}}},
		{"marked false positive", trend.Change{From: st("open", "CR"), To: st("false_positive", "CR"), At: at},
			trend.Day{Date: "2026-03-10", Dismissed: 1, Net: trend.ByUrgency{-1, 0, 0, 0}}},
		{"fixed marked duplicate", trend.Change{From: st("fixed", "ME"), To: st("duplicate", "ME"), At: at},
			trend.Day{Date: "2026-03-10", Dismissed: 1}},
		{"arrives suppressed", trend.Change{To: st("suppressed", "ME"), At: at},
			trend.Day{Date: "2026-03-10", Dismissed: 1}},
		{"between dismissed statuses", trend.Change{From: st("false_positive", "HI"), To: st("accepted_risk", "HI"), At: at},
			trend.Day{Date: "2026-03-10"}},
		{"open to fix in progress", trend.Change{From: st("open", "HI"), To: st("fix_in_progress", "HI"), At: at},
			trend.Day{Date: "2026-03-10"}},
		{"open deleted", trend.Change{From: st("open", "ME"), To: none, At: at},
			trend.Day{Date: "2026-03-10", Net: trend.ByUrgency{0, 0, -1, 0}}},
		{"fixed deleted", trend.Change{From: st("fixed", "ME"), To: none, At: at}, trend.Day{Date: "2026-03-10"}},
		{"the UTC day counts", trend.Change{To: st("open", "LO"), At: time.Date(2026, 3, 10, 21, 0, 0, 0, time.FixedZone("EST", -5*3600))},
			trend.Day{Date: "2026-03-11", Opened: 1, Net: trend.ByUrgency{0, 0, 0, 1}}},
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
	bad := []trend.Change{
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
	d := trend.Day{Date: "2026-03-10", Opened: 3, Fixed: 4, Dismissed: 1, Net: trend.ByUrgency{2, 0, -4, 0},
		WithinSLA: trend.ByUrgency{0, 1, 2, 0},
		TimeToFix: [4]trend.Histogram{1: {0: 1}, 2: {12: 2, 365: 1, trend.Over: 1}}}
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
	back, err := trend.ParseDay("2026-03-10", got)
	if err != nil || !reflect.DeepEqual(back, d) {
		t.Errorf("ParseDay: %v\n got %+v\nwant %+v", err, back, d)
	}
	if len((trend.Day{Date: "2026-03-10"}).Attrs()) != 0 {
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
		if _, err := trend.ParseDay(c.date, map[string]int64{c.name: 1}); err == nil {
			t.Errorf("ParseDay(%q, %s): no error", c.date, c.name)
		}
	}
	tot, err := trend.ParseTotals(map[string]int64{"seq": 12, "open_CR": 3, "open_LO": 9, "ver": 1})
	if err != nil || tot != (trend.Totals{Open: trend.ByUrgency{3, 0, 0, 9}, Seq: 12}) {
		t.Errorf("ParseTotals: %+v, %v", tot, err)
	}
	if _, err := trend.ParseTotals(map[string]int64{"open_XX": 1}); err == nil {
		t.Error("ParseTotals(open_XX): no error")
	}
}

func TestMerge(t *testing.T) {
	in := []trend.Day{
		{Date: "2026-03-10", Opened: 1, Net: trend.ByUrgency{1, 0, 0, 0}},
		{Date: "2026-03-09", Fixed: 1, Net: trend.ByUrgency{0, -1, 0, 0}, TimeToFix: [4]trend.Histogram{1: {3: 1}}},
		{Date: "2026-03-10", Dismissed: 1, Net: trend.ByUrgency{-1, 0, 0, 0}},
		{Date: "2026-03-09", Fixed: 1, Net: trend.ByUrgency{0, -1, 0, 0}, WithinSLA: trend.ByUrgency{0, 1, 0, 0}, TimeToFix: [4]trend.Histogram{1: {3: 1}}},
		{Date: "2026-03-08", Net: trend.ByUrgency{1, 0, 0, 0}},
		{Date: "2026-03-08", Net: trend.ByUrgency{-1, 0, 0, 0}},
	}
	want := []trend.Day{
		{Date: "2026-03-09", Fixed: 2, Net: trend.ByUrgency{0, -2, 0, 0}, WithinSLA: trend.ByUrgency{0, 1, 0, 0}, TimeToFix: [4]trend.Histogram{1: {3: 2}}},
		{Date: "2026-03-10", Opened: 1, Dismissed: 1},
	}
	if got := trend.Merge(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Merge\n got %+v\nwant %+v", got, want)
	}
}

func TestParseDays(t *testing.T) {
	for s, want := range map[string]int{"": 90, "1": 1, "30": 30, "365": 365} {
		if n, err := trend.ParseDays(s); err != nil || n != want {
			t.Errorf("ParseDays(%q) = %d, %v", s, n, err)
		}
	}
	for _, s := range []string{"0", "366", "-5", "abc", " 9", "9.0", "1e2", "99999999999999999999"} {
		if _, err := trend.ParseDays(s); !errors.Is(err, trend.ErrDays) {
			t.Errorf("ParseDays(%q): %v", s, err)
		}
	}
	if trend.ErrDays.Error() != "days must be an integer from 1 to 365" {
		t.Errorf("message %q", trend.ErrDays)
	}
}
