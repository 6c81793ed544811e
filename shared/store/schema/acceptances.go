package schema

import (
	"fmt"
	"time"
)

// MaxAcceptanceDays bounds an acceptance's end (the default period is the
// company's, with its SLA settings: sla.Settings.AcceptanceDays).
const MaxAcceptanceDays = 365

// Terms are an accepted risk's terms (docs/findings.md, "Risk acceptance"):
// until when, whose it is, who accepted it and when. An issue carries them
// (embedded, so its item holds them as attributes of its own, none while
// zero) while its status is accepted_risk, and the due index holds it by
// their end (AcceptedDuePK, AcceptedDueSK).
type Terms struct {
	ExpiresAt  string `dynamodbav:"risk_expires_at,omitempty"`
	Owner      int64  `dynamodbav:"risk_owner,omitempty"` // a user of the company; 0: none (a change by the system)
	AcceptedBy int64  `dynamodbav:"risk_accepted_by,omitempty"`
	AcceptedAt string `dynamodbav:"risk_accepted_at,omitempty"`
}

// Expires is the end of the terms.
func (t Terms) Expires() (time.Time, error) { return time.Parse(time.RFC3339, t.ExpiresAt) }

// CheckAcceptanceEnd reports an end that is not after now or is more than
// MaxAcceptanceDays after it.
func CheckAcceptanceEnd(end, now time.Time) error {
	switch {
	case !end.After(now):
		return fmt.Errorf("expires_at must be in the future")
	case end.After(now.AddDate(0, 0, MaxAcceptanceDays)):
		return fmt.Errorf("expires_at must be at most %d days ahead", MaxAcceptanceDays)
	}
	return nil
}
