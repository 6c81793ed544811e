package findings

import (
	"context"
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Risk terms on the write path: an accepted_risk issue carries its terms
// (an end and an owner), which every change settles (settleTerms); the
// due index holds it by its end (SetDue), so the triage area's expiry
// finds what ended by key.

// SLAStart is when the issue's SLA clock started: the first detection, or
// the last restart.
func (i Issue) SLAStart() (time.Time, error) {
	at := i.CreatedAt
	if i.SLAStartedAt != "" {
		at = i.SLAStartedAt
	}
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return time.Time{}, fmt.Errorf("issue %s SLA start %q: %w", i.ID, at, ddb.ErrInvalid)
	}
	return t, nil
}

// settleTerms gives each change's issue the terms its status allows: none
// unless accepted_risk; an issue that enters accepted_risk, or whose end or
// owner the change sets, gets an end (the company's default period when
// none was given; ErrInvalid when the one given is not in the next
// schema.MaxAcceptanceDays days), an owner (by's user when none was given), and
// who accepted it and when. Other changes keep the terms they had (an
// acceptance made before terms existed keeps having none), and terms a
// project decision carries (they name their acceptance) are kept as made.
func (x *Findings) settleTerms(ctx context.Context, companyID int64, changes []IssueChange, at string) error {
	now, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return err
	}
	days := 0 // the company's default period, read once when needed
	for _, c := range changes {
		a := c.After
		if a == nil {
			continue
		}
		if a.Status != "accepted_risk" {
			a.Terms = schema.Terms{}
			continue
		}
		entering := c.Before == nil || c.Before.Status != "accepted_risk"
		if !entering && a.Terms == c.Before.Terms {
			continue
		}
		if a.AcceptedAt != "" && (entering || a.AcceptedAt != c.Before.AcceptedAt) {
			continue // a project decision's terms, carried as they were made
		}
		if a.ExpiresAt == "" {
			if days == 0 {
				st, _, err := catalog.ReadSLASettings(ctx, companyID, x.t.GetItemConsistent)
				if err != nil {
					return err
				}
				days = st.AcceptanceDays
			}
			a.ExpiresAt = now.AddDate(0, 0, days).Format(time.RFC3339)
		} else if end, err := a.Expires(); err != nil {
			return fmt.Errorf("expires_at %q: %w", a.ExpiresAt, ddb.ErrInvalid)
		} else if err := schema.CheckAcceptanceEnd(end, now); err != nil {
			return fmt.Errorf("%s: %w", err.Error(), ddb.ErrInvalid)
		}
		if a.Owner == 0 {
			a.Owner = c.By.UserID
		}
		a.AcceptedBy, a.AcceptedAt = c.By.UserID, at
	}
	return nil
}
