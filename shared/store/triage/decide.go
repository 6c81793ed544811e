package triage

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/decisions"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/ledger"
)

// Triage follows the finding (docs/findings.md; the items are in
// store/decisions). A decision made on one branch's issue with scope
// project (the default) is stored for the finding's identity (project,
// tool, fingerprint) and carried, through the issue write path, onto the
// identity's issue of every other branch: at once (DecideIssue reads
// those issues by key: the project's branches come from its branch scope
// summaries, each issue's id from IssueID) and by every later scan that
// creates or reopens one (applyIssues). open and fixed stay per branch:
// a decision neither reopens nor fixes, a fixed issue keeps fixed, and a
// branch's own decision (scope branch) is never overwritten. Setting
// open with scope project withdraws the project decision from every issue
// that carries it. Each moved issue's history says where the decision came
// from.

// DecisionScopes are the scopes a triage may take.
var DecisionScopes = []string{decisions.Project, decisions.Branch}

// DecideIssue applies u to an issue of the company as a decision of scope
// ("" is DecisionProject) through the issue write path, carries it to the
// finding's issues of the project's other branches, and returns the
// issue; ErrNotFound when the company has no such issue. A retry changes
// nothing more, and finishes carrying a decision an attempt cut short.
func (x *Triage) DecideIssue(ctx context.Context, companyID int64, id string, u IssueUpdate, scope string, by findings.Actor) (findings.Issue, error) {
	if u.Status != nil && !slices.Contains(findings.ManualStatuses, *u.Status) {
		return findings.Issue{}, fmt.Errorf("status %q: %w", *u.Status, ddb.ErrInvalid)
	}
	if scope == "" {
		scope = decisions.Project
	}
	if !slices.Contains(DecisionScopes, scope) {
		return findings.Issue{}, fmt.Errorf("scope %q: %w", scope, ddb.ErrInvalid)
	}
	withdraw := scope == decisions.Project && u.Status != nil && *u.Status == "open"
	var before, after findings.Issue
	err := x.t.Retrying(ctx, func() error {
		var err error
		if before, err = findings.Consistent(ctx, x.f, companyID, id); err != nil {
			return err
		}
		after = updated(before, u)
		after.Decision = x.markOf(before, after, u, scope, by)
		// The decision's item keeps the terms the issue is given.
		if err := findings.SettleTerms(ctx, x.f, companyID, []findings.IssueChange{{Before: &before, After: &after, By: by}}, x.t.Stamp()); err != nil {
			return err
		}
		items, err := x.txDecision(companyID, after, withdraw)
		if err != nil {
			return err
		}
		if after == before && (!withdraw || len(items) == 0) {
			return x.transactSome(ctx, items) // the decision again: a retry heals its item
		}
		changes := issueChanges(before, after)
		if before.Decision != after.Decision {
			changes["decision_scope"] = ledger.Change{Before: before.Decision.Scope, After: after.Decision.Scope}
		}
		audit, err := x.l.TxAudit(ctx, companyID, ledger.AuditEntry{Action: "issue.update", TargetType: "issue", TargetID: after.ID, Changes: changes})
		if err != nil {
			return err
		}
		if after == before { // a withdrawal of a decision another branch made
			return x.t.Transact(ctx, append(items, audit...))
		}
		_, err = findings.Commit(ctx, x.f, companyID, []findings.IssueChange{{Before: &before, After: &after, By: by, Reason: after.Reason}}, append(items, audit...)...)
		return err
	})
	if err != nil {
		return findings.Issue{}, err
	}
	if before.Status != after.Status {
		if err := findings.Settle(ctx, x.f, companyID, findings.CounterKeys(companyID, []findings.Issue{before})); err != nil {
			return after, err
		}
	}
	if withdraw || after.Decision.Scope == decisions.Project && identified(after) {
		err = x.spread(ctx, companyID, after, withdraw, by)
	}
	return after, err
}

// transactSome writes items, if any.
func (x *Triage) transactSome(ctx context.Context, items []types.TransactWriteItem) error {
	if len(items) == 0 {
		return nil
	}
	return x.t.Transact(ctx, items)
}

// identified reports whether the issue has an identity beyond its branch.
func identified(i findings.Issue) bool { return i.Tool != "" && i.Fingerprint != "" }

// markOf is the decision after (before with u applied) carries; a change
// that leaves the triage as it was keeps the mark as it was.
func (x *Triage) markOf(before, after findings.Issue, u IssueUpdate, scope string, by findings.Actor) decisions.Mark {
	switch {
	case !findings.Decisive(after.Status) && after.Status != "open": // fixed, suppressed
		return decisions.Mark{}
	case scope == decisions.Project && after.Status == "open":
		if u.Status != nil { // a withdrawal
			return decisions.Mark{}
		}
		return before.Decision // an assignee of an open issue is no decision
	case before.Decision.Scope == scope && before.Status == after.Status && before.Reason == after.Reason && before.AssignedTo == after.AssignedTo:
		return before.Decision
	}
	return decisions.Mark{Scope: scope, DecidedBy: by.UserID, DecidedAt: x.t.Stamp(), Source: after.Branch}
}

// txDecision is the write of the identity's decision item that goes with
// the deciding issue's change: its put (a project decision) or delete (a
// withdrawal); none otherwise.
func (x *Triage) txDecision(companyID int64, i findings.Issue, withdraw bool) ([]types.TransactWriteItem, error) {
	switch {
	case !identified(i):
		return nil, nil
	case withdraw:
		return []types.TransactWriteItem{x.decisions.TxDeleteDecision(companyID, i.ProjectID, i.Tool, i.Fingerprint)}, nil
	case i.Decision.Scope != decisions.Project:
		return nil, nil
	}
	item, err := x.decisions.TxPutDecision(companyID, decisions.Decision{ProjectID: i.ProjectID, Tool: i.Tool, Fingerprint: i.Fingerprint,
		Status: i.Status, Reason: i.Reason, AssignedTo: i.AssignedTo, IssueID: i.ID, Mark: i.Decision, Terms: i.Terms})
	return []types.TransactWriteItem{item}, err
}

// spreadBatch is how many branches' issues spread reads and writes at a
// time.
const spreadBatch = 100

// spread carries src's project decision (or its withdrawal) onto the
// finding's issues of the project's other branches, by key.
func (x *Triage) spread(ctx context.Context, companyID int64, src findings.Issue, withdraw bool, by findings.Actor) error {
	branches, err := findings.ProjectBranches(ctx, x.f, companyID, src.ProjectID)
	if err != nil {
		return err
	}
	var ids []string
	for _, b := range branches {
		if b != src.Branch {
			ids = append(ids, findings.IssueID(companyID, src.ProjectID, b, src.Tool, src.Fingerprint))
		}
	}
	why := findings.DecisionNote(src.Branch, by.UserID)
	if withdraw {
		why = "decision withdrawn on " + src.Branch + " by " + findings.Person(by.UserID)
	}
	for start := 0; start < len(ids); start += spreadBatch {
		chunk := ids[start:min(start+spreadBatch, len(ids))]
		var touched []findings.Issue // across attempts: a conflict may follow committed chunks
		err := x.t.Retrying(ctx, func() error {
			existing, err := findings.ByID(ctx, x.f, companyID, chunk)
			if err != nil {
				return err
			}
			var changes []findings.IssueChange
			for _, id := range chunk {
				e, ok := existing[id]
				if !ok {
					continue
				}
				if after, ok := follow(e, src, withdraw); ok {
					touched = append(touched, e)
					changes = append(changes, findings.IssueChange{Before: &e, After: &after, By: by, Reason: why})
				}
			}
			_, err = findings.Commit(ctx, x.f, companyID, changes)
			return err
		})
		if err != nil {
			return err
		}
		if err := findings.Settle(ctx, x.f, companyID, findings.CounterKeys(companyID, touched)); err != nil {
			return err
		}
	}
	return nil
}

// follow is e after src's decision (or its withdrawal) reaches it, and
// whether that changes it: a fixed issue and a branch's own decision stay;
// a withdrawal reopens only what carries the project decision and is not
// fixed (a fixed one only loses the mark). An
// accepted risk's terms (end, owner, who accepted it and when) go with it.
func follow(e, src findings.Issue, withdraw bool) (findings.Issue, bool) {
	after := e
	switch {
	case withdraw && e.Decision.Scope != decisions.Project:
		return e, false
	case withdraw && e.Status == "fixed": // a withdrawal reopens nothing the code fixed
		after.Decision = decisions.Mark{}
	case withdraw:
		after.Status, after.Reason, after.Decision = "open", "", decisions.Mark{}
	case e.Status == "fixed" || e.Decision.Scope == decisions.Branch:
		return e, false
	default:
		after.Status, after.Reason, after.AssignedTo, after.Decision, after.Terms = src.Status, src.Reason, src.AssignedTo, src.Decision, src.Terms
	}
	return after, after != e
}
