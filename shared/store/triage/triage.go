package triage

import (
	"context"
	"fmt"
	"slices"

	"github.com/acme/codescan-api/shared/store/acceptances"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/decisions"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
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
	Terms acceptances.Terms
}

// UpdateIssue applies u to an issue of the company through the issue write
// path (counters and history in the same transaction) and returns it;
// ErrNotFound when the company has no such issue.
func (x *Triage) UpdateIssue(ctx context.Context, companyID int64, id string, u IssueUpdate, by findings.Actor) (findings.Issue, error) {
	if u.Status != nil && !slices.Contains(findings.ManualStatuses, *u.Status) {
		return findings.Issue{}, fmt.Errorf("status %q: %w", *u.Status, ddb.ErrInvalid)
	}
	var before, after findings.Issue
	err := x.t.Retrying(ctx, func() error {
		var err error
		if before, err = findings.Consistent(ctx, x.f, companyID, id); err != nil {
			return err
		}
		after = updated(before, u)
		if after == before {
			return nil
		}
		audit, err := x.l.TxAudit(ctx, companyID, ledger.AuditEntry{Action: "issue.update", TargetType: "issue", TargetID: id,
			Changes: issueChanges(before, after)})
		if err != nil {
			return err
		}
		_, err = findings.Commit(ctx, x.f, companyID, []findings.IssueChange{{Before: &before, After: &after, By: by, Reason: after.Reason}}, audit...)
		return err
	})
	if err != nil {
		return findings.Issue{}, err
	}
	if before.Status != after.Status {
		err = findings.Settle(ctx, x.f, companyID, findings.CounterKeys(companyID, []findings.Issue{before}))
	}
	return after, err
}

// updated is i with u applied. A status change without a reason clears
// the previous reason.
func updated(i findings.Issue, u IssueUpdate) findings.Issue {
	if u.Status != nil && *u.Status != i.Status {
		i.Status, i.Reason, i.Decision = *u.Status, "", decisions.Mark{} // a decision is made by DecideIssue
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
func (x *Triage) TriageIssues(ctx context.Context, companyID int64, f issuelists.IssueFilter, status, reason string, terms acceptances.Terms, by findings.Actor) (matched, changed int, err error) {
	if !slices.Contains(findings.ManualStatuses, status) {
		return 0, 0, fmt.Errorf("status %q: %w", status, ddb.ErrInvalid)
	}
	_, _, total, err := x.lists.ListIssues(ctx, companyID, f, page.Request{})
	if err != nil {
		return 0, 0, err
	}
	if total > MaxTriage {
		return 0, 0, &ErrTooMany{Matched: total}
	}
	page, _, _, err := x.lists.ListIssues(ctx, companyID, f, page.Request{Limit: int(total)})
	if err != nil {
		return 0, 0, err
	}
	ids := findings.IDs(page)
	u := IssueUpdate{Status: &status, Terms: terms}
	if reason != "" {
		u.Reason = &reason
	}
	var touched []findings.Issue
	err = x.t.Retrying(ctx, func() error {
		existing, err := findings.ByID(ctx, x.f, companyID, ids)
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
		audit, err := x.l.TxAudit(ctx, companyID, ledger.AuditEntry{Action: "issue.triage", TargetType: "issues",
			TargetID: fmt.Sprintf("%d issues", len(changes)), Changes: map[string]ledger.Change{
				"status": {Before: nil, After: status}, "reason": {Before: nil, After: reason}}})
		if err != nil {
			return err
		}
		n, err := findings.Commit(ctx, x.f, companyID, changes, audit...)
		changed += n
		return err
	})
	if err != nil {
		return len(ids), changed, err
	}
	return len(ids), changed, findings.Settle(ctx, x.f, companyID, findings.CounterKeys(companyID, touched))
}

// issueChanges is what an update changed of an issue, for the audit log.
func issueChanges(before, after findings.Issue) map[string]ledger.Change {
	out := map[string]ledger.Change{}
	if before.Status != after.Status {
		out["status"] = ledger.Change{Before: before.Status, After: after.Status}
	}
	if before.Reason != after.Reason {
		out["reason"] = ledger.Change{Before: before.Reason, After: after.Reason}
	}
	if before.AssignedTo != after.AssignedTo {
		out["assigned_to"] = ledger.Change{Before: before.AssignedTo, After: after.AssignedTo}
	}
	if before.ExpiresAt != after.ExpiresAt {
		out["expires_at"] = ledger.Change{Before: before.ExpiresAt, After: after.ExpiresAt}
	}
	if before.Owner != after.Owner {
		out["owner"] = ledger.Change{Before: before.Owner, After: after.Owner}
	}
	return out
}
