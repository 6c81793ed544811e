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
