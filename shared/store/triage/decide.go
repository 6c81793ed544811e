package triage

import (
	"context"
	"fmt"
	"slices"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
	Terms schema.Terms
}

// UpdateIssue applies u to an issue of the company through the issue write
// path (counters and history in the same transaction) and returns it;
// ErrNotFound when the company has no such issue.
func (x *Triage) UpdateIssue(ctx context.Context, companyID int64, id string, u IssueUpdate, by findings.Actor) (findings.Issue, error) {
	if u.Status != nil && !slices.Contains(findings.ManualStatuses, *u.Status) {
		return findings.Issue{}, fmt.Errorf("status %q: %w", *u.Status, ddb.ErrInvalid)
	}
	var before, after findings.Issue
	err := x.updateOne(ctx, companyID, id, func(got findings.Issue) (edit, error) {
		before = got
		after = updated(before, u)
		if after == before {
			return edit{}, nil
		}
		audit, err := x.l.TxAudit(ctx, companyID, ledger.AuditEntry{Action: "issue.update", TargetType: "issue", TargetID: id,
			Changes: issueChanges(before, after)})
		return edit{changes: []findings.IssueChange{{Before: &before, After: &after, By: by, Reason: after.Reason}}, items: audit}, err
	})
	if err != nil {
		return findings.Issue{}, err
	}
	return after, nil
}

// updated is i with u applied. A status change without a reason clears
// the previous reason.
func updated(i findings.Issue, u IssueUpdate) findings.Issue {
	if u.Status != nil && *u.Status != i.Status {
		i.Status, i.Reason, i.Decision = *u.Status, "", schema.DecisionMark{} // a decision is made by DecideIssue
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
func (x *Triage) TriageIssues(ctx context.Context, companyID int64, f issuelists.IssueFilter, status, reason string, terms schema.Terms, by findings.Actor) (matched, changed int, err error) {
	if !slices.Contains(findings.ManualStatuses, status) {
		return 0, 0, fmt.Errorf("status %q: %w", status, ddb.ErrInvalid)
	}
	counted, err := x.lists.ListIssues(ctx, companyID, f, page.Request{})
	if err != nil {
		return 0, 0, err
	}
	total := counted.Count()
	if total > MaxTriage {
		return 0, 0, &ErrTooMany{Matched: total}
	}
	matches, err := x.lists.ListIssues(ctx, companyID, f, page.Request{Limit: int(total)})
	if err != nil {
		return 0, 0, err
	}
	ids := findings.IDs(matches.Items)
	u := IssueUpdate{Status: &status, Terms: terms}
	if reason != "" {
		u.Reason = &reason
	}
	done, err := x.update(ctx, companyID, ids, func(existing map[string]findings.Issue, _ int) (edit, error) {
		var changes []findings.IssueChange
		for _, id := range ids {
			before, ok := existing[id]
			if !ok {
				continue
			}
			if after := updated(before, u); after != before {
				changes = append(changes, findings.IssueChange{Before: &before, After: &after, By: by, Reason: after.Reason})
			}
		}
		if len(changes) == 0 {
			return edit{}, nil
		}
		// One audit entry per request, with the first transaction: what was
		// asked and how many issues it changed.
		audit, err := x.l.TxAudit(ctx, companyID, ledger.AuditEntry{Action: "issue.triage", TargetType: "issues",
			TargetID: fmt.Sprintf("%d issues", len(changes)), Changes: map[string]ledger.Change{
				"status": {Before: nil, After: status}, "reason": {Before: nil, After: reason}}})
		return edit{changes: changes, items: audit}, err
	})
	return len(ids), len(done), err
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

// DecisionScopes are the scopes a triage may take.
var DecisionScopes = []string{schema.DecisionProject, schema.DecisionBranch}

// DecideIssue applies u to an issue of the company as a decision of scope
// ("" is DecisionProject) through the issue write path, carries it to the
// finding's issues of the project's other branches (decisions.go), and
// returns the issue; ErrNotFound when the company has no such issue. A
// retry changes nothing more, and finishes carrying a decision an attempt
// cut short.
func (x *Triage) DecideIssue(ctx context.Context, companyID int64, id string, u IssueUpdate, scope string, by findings.Actor) (findings.Issue, error) {
	if u.Status != nil && !slices.Contains(findings.ManualStatuses, *u.Status) {
		return findings.Issue{}, fmt.Errorf("status %q: %w", *u.Status, ddb.ErrInvalid)
	}
	if scope == "" {
		scope = schema.DecisionProject
	}
	if !slices.Contains(DecisionScopes, scope) {
		return findings.Issue{}, fmt.Errorf("scope %q: %w", scope, ddb.ErrInvalid)
	}
	withdraw := scope == schema.DecisionProject && u.Status != nil && *u.Status == "open"
	var before, after findings.Issue
	err := x.updateOne(ctx, companyID, id, func(got findings.Issue) (edit, error) {
		before = got
		after = updated(before, u)
		after.Decision = x.markOf(before, after, u, scope, by)
		return x.decision(ctx, companyID, &before, &after, withdraw, by)
	})
	if err != nil {
		return findings.Issue{}, err
	}
	if withdraw || after.Decision.Scope == schema.DecisionProject && identified(after) {
		err = x.spread(ctx, companyID, after, withdraw, by)
	}
	return after, err
}

// decision is the edit that decides the issue before as after (or
// withdraws the project decision it carries): the issue's change, its
// identity's decision item and the audit entry. The same decision again
// writes only its item (a retry heals it); a withdrawal of a decision
// another branch made, the item's removal and the audit entry.
func (x *Triage) decision(ctx context.Context, companyID int64, before, after *findings.Issue, withdraw bool, by findings.Actor) (edit, error) {
	// The decision's item keeps the terms the issue is given.
	if err := findings.SettleTerms(ctx, x.f, companyID, []findings.IssueChange{{Before: before, After: after, By: by}}, x.t.Stamp()); err != nil {
		return edit{}, err
	}
	items, err := x.txDecision(companyID, *after, withdraw)
	if err != nil {
		return edit{}, err
	}
	if *after == *before && (!withdraw || len(items) == 0) {
		return edit{items: items}, nil
	}
	changes := issueChanges(*before, *after)
	if before.Decision != after.Decision {
		changes["decision_scope"] = ledger.Change{Before: before.Decision.Scope, After: after.Decision.Scope}
	}
	audit, err := x.l.TxAudit(ctx, companyID, ledger.AuditEntry{Action: "issue.update", TargetType: "issue", TargetID: after.ID, Changes: changes})
	if err != nil {
		return edit{}, err
	}
	if *after == *before {
		return edit{items: append(items, audit...)}, nil
	}
	return edit{changes: []findings.IssueChange{{Before: before, After: after, By: by, Reason: after.Reason}}, items: append(items, audit...)}, nil
}

// identified reports whether the issue has an identity beyond its branch.
func identified(i findings.Issue) bool { return i.Tool != "" && i.Fingerprint != "" }

// markOf is the decision after (before with u applied) carries; a change
// that leaves the triage as it was keeps the mark as it was.
func (x *Triage) markOf(before, after findings.Issue, u IssueUpdate, scope string, by findings.Actor) schema.DecisionMark {
	switch {
	case !findings.Decisive(after.Status) && after.Status != "open": // fixed, suppressed
		return schema.DecisionMark{}
	case scope == schema.DecisionProject && after.Status == "open":
		if u.Status != nil { // a withdrawal
			return schema.DecisionMark{}
		}
		return before.Decision // an assignee of an open issue is no decision
	case before.Decision.Scope == scope && before.Status == after.Status && before.Reason == after.Reason && before.AssignedTo == after.AssignedTo:
		return before.Decision
	}
	return schema.DecisionMark{Scope: scope, DecidedBy: by.UserID, DecidedAt: x.t.Stamp(), Source: after.Branch}
}

// txDecision is the write of the identity's decision item that goes with
// the deciding issue's change: its put (a project decision) or delete (a
// withdrawal); none otherwise.
func (x *Triage) txDecision(companyID int64, i findings.Issue, withdraw bool) ([]types.TransactWriteItem, error) {
	switch {
	case !identified(i):
		return nil, nil
	case withdraw:
		return []types.TransactWriteItem{x.TxDeleteDecision(companyID, i.ProjectID, i.Tool, i.Fingerprint)}, nil
	case i.Decision.Scope != schema.DecisionProject:
		return nil, nil
	}
	item, err := x.TxPutDecision(companyID, schema.Decision{ProjectID: i.ProjectID, Tool: i.Tool, Fingerprint: i.Fingerprint,
		Status: i.Status, Reason: i.Reason, AssignedTo: i.AssignedTo, IssueID: i.ID, Mark: i.Decision, Terms: i.Terms})
	return []types.TransactWriteItem{item}, err
}
