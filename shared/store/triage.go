package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/acme/codescan-api/shared/store/findings"
)

// IssueUpdate is a change people make to an issue; nil fields stay as
// they are.
type IssueUpdate struct {
	Status     *string
	Reason     *string
	AssignedTo *int64 // 0 unassigns
	// Terms set an accepted risk's end and owner; a zero member keeps the
	// issue's, or, for an issue entering accepted_risk, gets the default
	// (the company's period, the author: see settleTerms).
	Terms RiskTerms
}

// UpdateIssue applies u to an issue of the company through the issue write
// path (counters and history in the same transaction) and returns it;
// ErrNotFound when the company has no such issue.
func (s *Store) UpdateIssue(ctx context.Context, companyID int64, id string, u IssueUpdate, by Actor) (Issue, error) {
	if u.Status != nil && !slices.Contains(ManualStatuses, *u.Status) {
		return Issue{}, fmt.Errorf("status %q: %w", *u.Status, ErrInvalid)
	}
	var before, after Issue
	err := s.t.Retrying(ctx, func() error {
		var err error
		if before, err = findings.Consistent(ctx, s.Findings, companyID, id); err != nil {
			return err
		}
		after = updated(before, u)
		if after == before {
			return nil
		}
		audit, err := s.l.TxAudit(ctx, companyID, AuditEntry{Action: "issue.update", TargetType: "issue", TargetID: id,
			Changes: issueChanges(before, after)})
		if err != nil {
			return err
		}
		_, err = findings.Commit(ctx, s.Findings, companyID, []findings.IssueChange{{Before: &before, After: &after, By: by, Reason: after.Reason}}, audit...)
		return err
	})
	if err != nil {
		return Issue{}, err
	}
	if before.Status != after.Status {
		err = findings.Settle(ctx, s.Findings, companyID, findings.CounterKeys(companyID, []Issue{before}))
	}
	return after, err
}

// updated is i with u applied. A status change without a reason clears
// the previous reason.
func updated(i Issue, u IssueUpdate) Issue {
	if u.Status != nil && *u.Status != i.Status {
		i.Status, i.Reason, i.Decision = *u.Status, "", IssueDecision{} // a decision is made by DecideIssue
		if i.Status != "fixed" {
			i.FixedAt, i.FixedScanID = "", ""
		}
	}
	if u.Reason != nil {
		i.Reason = *u.Reason
	}
	if u.AssignedTo != nil {
		i.AssignedTo = *u.AssignedTo
	}
	if u.Terms.ExpiresAt != "" {
		i.ExpiresAt = u.Terms.ExpiresAt
	}
	if u.Terms.Owner != 0 {
		i.Owner = u.Terms.Owner
	}
	return i
}

// MaxTriage is the most issues one bulk triage may match.
const MaxTriage = 1000

// ErrTooMany is returned by TriageIssues when the filter matches more than
// MaxTriage issues; nothing is changed.
type ErrTooMany struct{ Matched int64 }

func (e *ErrTooMany) Error() string {
	return fmt.Sprintf("the filter matches %d issues; at most %d can be triaged at once", e.Matched, MaxTriage)
}

// TriageIssues sets status (and reason, and an accepted risk's terms) on
// every issue f matches, through the issue write path, and returns how
// many matched and how many changed (an issue already in the status does
// not change, so a retry changes 0).
func (s *Store) TriageIssues(ctx context.Context, companyID int64, f IssueFilter, status, reason string, terms RiskTerms, by Actor) (matched, changed int, err error) {
	if !slices.Contains(ManualStatuses, status) {
		return 0, 0, fmt.Errorf("status %q: %w", status, ErrInvalid)
	}
	_, _, total, err := s.ListIssues(ctx, companyID, f, PageQuery{})
	if err != nil {
		return 0, 0, err
	}
	if total > MaxTriage {
		return 0, 0, &ErrTooMany{Matched: total}
	}
	page, _, _, err := s.ListIssues(ctx, companyID, f, PageQuery{Limit: int(total)})
	if err != nil {
		return 0, 0, err
	}
	ids := findings.IDs(page)
	u := IssueUpdate{Status: &status, Terms: terms}
	if reason != "" {
		u.Reason = &reason
	}
	var touched []Issue
	err = s.t.Retrying(ctx, func() error {
		existing, err := findings.ByID(ctx, s.Findings, companyID, ids)
		if err != nil {
			return err
		}
		var changes []findings.IssueChange
		for _, id := range ids {
			before, ok := existing[id]
			if !ok {
				continue
			}
			after := updated(before, u)
			if after != before {
				touched = append(touched, before)
				changes = append(changes, findings.IssueChange{Before: &before, After: &after, By: by, Reason: after.Reason})
			}
		}
		// One audit entry per request, with the first transaction: what was
		// asked and how many issues it changed.
		audit, err := s.l.TxAudit(ctx, companyID, AuditEntry{Action: "issue.triage", TargetType: "issues",
			TargetID: fmt.Sprintf("%d issues", len(changes)), Changes: map[string]Change{
				"status": {Before: nil, After: status}, "reason": {Before: nil, After: reason}}})
		if err != nil {
			return err
		}
		n, err := findings.Commit(ctx, s.Findings, companyID, changes, audit...)
		changed += n
		return err
	})
	if err != nil {
		return len(ids), changed, err
	}
	return len(ids), changed, findings.Settle(ctx, s.Findings, companyID, findings.CounterKeys(companyID, touched))
}

// issueChanges is what an update changed of an issue, for the audit log.
func issueChanges(before, after Issue) map[string]Change {
	out := map[string]Change{}
	if before.Status != after.Status {
		out["status"] = Change{Before: before.Status, After: after.Status}
	}
	if before.Reason != after.Reason {
		out["reason"] = Change{Before: before.Reason, After: after.Reason}
	}
	if before.AssignedTo != after.AssignedTo {
		out["assigned_to"] = Change{Before: before.AssignedTo, After: after.AssignedTo}
	}
	if before.ExpiresAt != after.ExpiresAt {
		out["expires_at"] = Change{Before: before.ExpiresAt, After: after.ExpiresAt}
	}
	if before.Owner != after.Owner {
		out["owner"] = Change{Before: before.Owner, After: after.Owner}
	}
	return out
}
