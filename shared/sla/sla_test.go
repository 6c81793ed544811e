package sla_test

import (
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/sla"
)

func TestStatus(t *testing.T) {
	first := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	s := sla.Defaults()
	cases := []struct {
		urgency string
		now     time.Time
		want    string
		due     time.Time
	}{
		{"CR", first.AddDate(0, 0, 3), sla.OnTrack, first.AddDate(0, 0, 7)},
		{"critical", first.AddDate(0, 0, 4), sla.DueSoon, first.AddDate(0, 0, 7)},
		{"CR", first.AddDate(0, 0, 7).Add(-time.Second), sla.DueSoon, first.AddDate(0, 0, 7)},
		{"CR", first.AddDate(0, 0, 7), sla.Overdue, first.AddDate(0, 0, 7)},
		{"HI", first.AddDate(0, 0, 26), sla.OnTrack, first.AddDate(0, 0, 30)},
		{"high", first.AddDate(0, 0, 31), sla.Overdue, first.AddDate(0, 0, 30)},
		{"ME", first.AddDate(0, 0, 88), sla.DueSoon, first.AddDate(0, 0, 90)},
		{"LO", first.AddDate(0, 0, 100), sla.OnTrack, first.AddDate(0, 0, 180)},
		{"unknown", first.AddDate(0, 0, 100), sla.OnTrack, first.AddDate(0, 0, 180)},
	}
	for _, c := range cases {
		got, due := sla.Status(first, c.urgency, s, c.now)
		if got != c.want || !due.Equal(c.due) {
			t.Errorf("%s at %s: %s due %s, want %s due %s", c.urgency, c.now, got, due, c.want, c.due)
		}
	}
	custom := sla.Settings{DaysToFix: map[string]int{"CR": 1, "HI": 2, "ME": 3, "LO": 4}, DueSoonDays: 0}
	if got, _ := sla.Status(first, "CR", custom, first.Add(23*time.Hour)); got != sla.OnTrack {
		t.Errorf("no due-soon window: %s", got)
	}
	if got, _ := sla.Status(first, "CR", custom, first.Add(24*time.Hour)); got != sla.Overdue {
		t.Errorf("custom days: %s", got)
	}
}

// Window classifies first detections exactly as Status does, at and around
// each boundary, for defaults and custom settings, in any time zone.
func TestWindowAgreesWithStatus(t *testing.T) {
	now := time.Date(2026, 11, 20, 9, 30, 0, 0, time.FixedZone("X", -5*3600))
	custom := sla.Settings{DaysToFix: map[string]int{"CR": 2, "HI": 5, "ME": 9, "LO": 40}, DueSoonDays: 1}
	for _, s := range []sla.Settings{sla.Defaults(), custom} {
		for _, u := range sla.Urgencies {
			overdueBy, dueSoonBy := sla.Window(u, s, now)
			for _, edge := range []time.Time{overdueBy, dueSoonBy} {
				for _, d := range []time.Duration{-time.Hour, -time.Nanosecond, 0, time.Nanosecond, time.Hour} {
					first := edge.Add(d).In(time.FixedZone("Y", 3*3600))
					want := sla.OnTrack
					switch {
					case !first.After(overdueBy):
						want = sla.Overdue
					case !first.After(dueSoonBy):
						want = sla.DueSoon
					}
					if got, _ := sla.Status(first, u, s, now); got != want {
						t.Errorf("%s first %s: Status %s, Window %s", u, first, got, want)
					}
				}
			}
		}
	}
}
