// Package sla computes an issue's SLA status: each urgency has a number of
// days to fix, counted from the first detection; an open issue is
// on track, due soon (inside the due-soon window before its due date) or
// overdue.
package sla

import (
	"strings"
	"time"
)

// Statuses.
const (
	OnTrack = "on_track"
	DueSoon = "due_soon"
	Overdue = "overdue"
)

// Urgencies, as issues store them.
var Urgencies = []string{"CR", "HI", "ME", "LO"}

// Settings are a company's SLA settings.
type Settings struct {
	DaysToFix   map[string]int // by urgency code
	DueSoonDays int            // the window before the due date that is due_soon
	// AcceptanceDays is how long a risk acceptance given without an end
	// lasts.
	AcceptanceDays int
	// DismissalRulesNeedApproval makes every triage rule that dismisses
	// (false_positive, accepted_risk) wait for an admin other than its
	// author, whatever its author asks.
	DismissalRulesNeedApproval bool
}

// Defaults apply to a company that has not set its own.
func Defaults() Settings {
	return Settings{DaysToFix: map[string]int{"CR": 7, "HI": 30, "ME": 90, "LO": 180}, DueSoonDays: 3, AcceptanceDays: 90}
}

// Urgency returns the urgency code of u (CR, critical, ...), and false
// when it is none.
func Urgency(u string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(u)) {
	case "cr", "critical":
		return "CR", true
	case "hi", "high":
		return "HI", true
	case "me", "medium":
		return "ME", true
	case "lo", "low":
		return "LO", true
	}
	return "", false
}

// Due is the date an issue first detected at firstDetection must be fixed
// by. An unknown urgency gets the most lenient (low) deadline.
func Due(firstDetection time.Time, urgency string, s Settings) time.Time {
	return firstDetection.AddDate(0, 0, s.days(urgency))
}

// days is the days to fix of an urgency (low's for an unknown one).
func (s Settings) days(urgency string) int {
	code, ok := Urgency(urgency)
	if !ok {
		code = "LO"
	}
	days, ok := s.DaysToFix[code]
	if !ok {
		days = Defaults().DaysToFix[code]
	}
	return days
}

// Window is Status turned around, for reading issues by first detection:
// at now, an open issue of the urgency is overdue when first detected at
// or before overdueBy, due soon when after it and at or before dueSoonBy.
// Both are UTC instants, as the store's index keys are.
func Window(urgency string, s Settings, now time.Time) (overdueBy, dueSoonBy time.Time) {
	overdueBy = now.UTC().AddDate(0, 0, -s.days(urgency))
	return overdueBy, overdueBy.AddDate(0, 0, s.DueSoonDays)
}

// Status is the SLA status of an open issue at now, and its due date.
func Status(firstDetection time.Time, urgency string, s Settings, now time.Time) (string, time.Time) {
	due := Due(firstDetection, urgency, s)
	return StatusAt(due, s, now), due
}

// StatusAt is the SLA status at now of an open issue due at due.
func StatusAt(due time.Time, s Settings, now time.Time) string {
	switch {
	case !now.Before(due):
		return Overdue
	case !now.Before(due.AddDate(0, 0, -s.DueSoonDays)):
		return DueSoon
	}
	return OnTrack
}
