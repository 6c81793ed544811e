package sca

import (
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/sla"
)

// An SCA finding's SLA deadline is computed when it is read, from what is
// stored (its status, first detection, severity and its CVE's KEV entry)
// and the company's settings: a settings change or a KEV import rewrites
// no finding for it.

// Urgency is the urgency code of an SCA finding's severity: CRITICAL CR,
// HIGH HI, MEDIUM or MODERATE ME, LOW LO. Anything else (UNSPECIFIED, none)
// is ME, as the report readers rate a finding without a severity.
func Urgency(severity string) string {
	switch strings.ToUpper(strings.TrimSpace(severity)) {
	case "CRITICAL":
		return "CR"
	case "HIGH":
		return "HI"
	case "LOW":
		return "LO"
	}
	return "ME"
}

// Deadline is when the finding must be fixed under the settings: its
// first detection plus its urgency's days to fix, or its CVE's KEV due
// date (00:00 UTC that day) when that is earlier. A finding that is not
// open has none (false), as a SAST issue leaves the SLA when triaged.
func (i Issue) Deadline(s sla.Settings) (time.Time, bool) {
	if i.Status != "open" {
		return time.Time{}, false
	}
	first, err := time.Parse(time.RFC3339, i.CreatedAt)
	if err != nil { // written by the store: only an item edited by hand
		return time.Time{}, false
	}
	due := sla.Due(first, Urgency(i.Severity), s).UTC()
	if i.KEV != nil {
		if kev, err := time.Parse(time.DateOnly, i.KEV.DueDate); err == nil && kev.Before(due) {
			due = kev
		}
	}
	return due, true
}
