package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/acme/codescan-api/shared/store/acceptances"
)

// Risk acceptance (issue 26, item 2): an accepted_risk issue carries its
// terms (an end and an owner, acceptances.Terms), which the write path
// settles on every change (settleTerms), and the due index holds it by its
// end (setDue), so ExpireAcceptances finds what ended by key.

// AcceptanceExpired is the history reason, and the issue's, of an
// acceptance that ended.
const AcceptanceExpired = "risk acceptance expired"

// RiskTerms are the terms of an accepted risk.
type RiskTerms = acceptances.Terms

// SLAStart is when the issue's SLA clock started: the first detection, or
// the last restart.
func (i Issue) SLAStart() (time.Time, error) {
	at := i.CreatedAt
	if i.SLAStartedAt != "" {
		at = i.SLAStartedAt
	}
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return time.Time{}, fmt.Errorf("issue %s SLA start %q: %w", i.ID, at, ErrInvalid)
	}
	return t, nil
}

// settleTerms gives each change's issue the terms its status allows: none
// unless accepted_risk; an issue that enters accepted_risk, or whose end or
// owner the change sets, gets an end (the company's default period when
// none was given; ErrInvalid when the one given is not in the next
// acceptances.MaxDays days), an owner (by's user when none was given), and
// who accepted it and when. Other changes keep the terms they had (an
// acceptance made before terms existed keeps having none).
func (s *Store) settleTerms(ctx context.Context, companyID int64, changes []issueChange, at string) error {
	now, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return err
	}
	days := 0 // the company's default period, read once when needed
	for _, c := range changes {
		a := c.after
		if a == nil {
			continue
		}
		if a.Status != "accepted_risk" {
			a.Terms = RiskTerms{}
			continue
		}
		entering := c.before == nil || c.before.Status != "accepted_risk"
		if !entering && a.Terms == c.before.Terms {
			continue
		}
		if a.ExpiresAt == "" {
			if days == 0 {
				st, _, err := s.slaSettings(ctx, companyID, s.t.GetItemConsistent)
				if err != nil {
					return err
				}
				days = st.AcceptanceDays
			}
			a.ExpiresAt = now.AddDate(0, 0, days).Format(time.RFC3339)
		} else if end, err := a.Expires(); err != nil {
			return fmt.Errorf("expires_at %q: %w", a.ExpiresAt, ErrInvalid)
		} else if err := acceptances.CheckEnd(end, now); err != nil {
			return fmt.Errorf("%s: %w", err.Error(), ErrInvalid)
		}
		if a.Owner == 0 {
			a.Owner = c.by.UserID
		}
		a.AcceptedBy, a.AcceptedAt = c.by.UserID, at
	}
	return nil
}

// ExpireAcceptances reopens the company's accepted risks whose end has
// come, through the issue write path: status open, history and reason
// AcceptanceExpired, the SLA clock restarted now, a
// risk_acceptance_expired event beside issue_status_changed. It reads the
// company's expiry partition up to now (by key), then each issue
// consistently, and changes only those still accepted and ended, so a
// second run changes nothing. It returns how many it reopened.
func (s *Store) ExpireAcceptances(ctx context.Context, companyID int64) (int, error) {
	now := s.t.Clock()
	reopened := 0
	err := s.Acceptances.EachEndingBefore(ctx, companyID, now.Truncate(time.Second).Add(time.Second), func(keys []Key) error {
		var touched []Issue
		err := s.t.Retrying(ctx, func() error {
			got, err := s.t.BatchGet(ctx, keys)
			if err != nil {
				return err
			}
			at := s.t.Stamp()
			var changes []issueChange
			for _, av := range got {
				var i Issue
				if err := attributevalue.UnmarshalMap(av, &i); err != nil {
					return err
				}
				c, ok, err := expiry(companyID, i, now, at)
				if err != nil {
					return err
				}
				if ok {
					touched = append(touched, i)
					changes = append(changes, c)
				}
			}
			n, err := s.commitIssues(ctx, companyID, changes)
			reopened += n
			return err
		})
		if err != nil {
			return err
		}
		return s.settleCounters(ctx, companyID, counterKeysOf(companyID, touched))
	})
	return reopened, err
}

// expiry is the change that reopens i when its acceptance has ended at
// now; false when it has not (or i is no longer accepted).
func expiry(companyID int64, i Issue, now time.Time, at string) (issueChange, bool, error) {
	if i.Status != "accepted_risk" || i.ExpiresAt == "" {
		return issueChange{}, false, nil
	}
	end, err := i.Expires()
	if err != nil || now.Before(end) {
		return issueChange{}, false, nil
	}
	after := i
	after.Status, after.Reason, after.SLAStartedAt = "open", AcceptanceExpired, at
	data, err := json.Marshal(map[string]any{
		"issue_id": i.ID, "project_id": i.ProjectID, "project_name": i.ProjectName, "branch": i.Branch,
		"title": i.Title, "urgency": i.Urgency, "expires_at": i.ExpiresAt, "owner": userOrNull(i.Owner),
		"accepted_by": userOrNull(i.AcceptedBy), "accepted_at": i.AcceptedAt, "reopened_at": at,
	})
	if err != nil {
		return issueChange{}, false, err
	}
	// The id names the version the reopen writes: a retried transaction
	// records the same event, a later acceptance's end a new one.
	e := Event{ID: fmt.Sprintf("risk_acceptance_expired-%s-v%d", i.ID, i.Version+1), CompanyID: companyID,
		Type: "risk_acceptance_expired", Data: data}
	return issueChange{before: &i, after: &after, reason: AcceptanceExpired, events: []Event{e}}, true, nil
}

func userOrNull(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// listAccepted is ListIssues for a filter with AcceptedBefore: the
// company's accepted risks ending before it, soonest end first, that the
// rest of f matches. It reads the expiry partition's range (by key) and
// those issues, so its cost grows with the acceptances ending before the
// date, never with the company's other issues; it pages by number only.
func (s *Store) listAccepted(ctx context.Context, companyID int64, f IssueFilter, q PageQuery) ([]Issue, PageResult, int64, error) {
	if q.Token != "" {
		return nil, PageResult{}, 0, ErrBadPageToken
	}
	all := []Issue{}
	err := s.Acceptances.EachEndingBefore(ctx, companyID, f.AcceptedBefore, func(keys []Key) error {
		got, err := s.t.ReadBatch(ctx, keys, false)
		if err != nil {
			return err
		}
		for _, k := range keys {
			av, ok := got[k]
			if !ok {
				continue // deleted since
			}
			var i Issue
			if err := attributevalue.UnmarshalMap(av, &i); err != nil {
				return err
			}
			if f.acceptedMatch(i) {
				all = append(all, i)
			}
		}
		return nil
	})
	if err != nil {
		return nil, PageResult{}, 0, err
	}
	from := min(q.Offset, len(all))
	return all[from:min(from+max(q.Limit, 0), len(all))], PageResult{Offset: q.Offset}, int64(len(all)), nil
}

// acceptedMatch reports whether i, read by its key in the expiry partition
// (eventually consistent: it may have changed since), is an accepted risk
// ending before f.AcceptedBefore that the rest of f matches.
func (f IssueFilter) acceptedMatch(i Issue) bool {
	end, err := i.Expires()
	switch {
	case i.Status != "accepted_risk" || err != nil || !end.Before(f.AcceptedBefore),
		f.Status != "" && f.Status != i.Status,
		f.Urgency != "" && f.Urgency != i.Urgency,
		f.CWE != nil && *f.CWE != i.CWE,
		f.FilePath != "" && f.FilePath != i.FilePath:
		return false
	}
	if len(f.Scopes) == 0 {
		return true
	}
	for _, sc := range f.Scopes {
		if sc.ProjectID == 0 || sc.ProjectID == i.ProjectID && (sc.Branch == "" || sc.Branch == i.Branch) {
			return true
		}
	}
	return false
}
