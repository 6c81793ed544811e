package triage

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// The triage decisions that follow a finding
// (docs/findings.md, "Decisions follow the finding"). A finding's identity within its project is its tool
// and fingerprint; every branch has its own issue of it, but a person's
// triage (a status other than open and fixed, its reason, the assignee) is
// about the finding, so it is stored once per identity:
//
//	C#<co>#DECISIONS#<project>  D#<tool hash>#<fingerprint hash>   the decision
//
// and carried onto the identity's issues of every branch by the store's
// issue write path (DecideIssue): at once onto the issues that exist,
// and by every later scan onto the issues it creates or reopens (one query
// of the project's decisions of the scan's tool per scan). An issue shows
// the decision it carries as a schema.DecisionMark; a branch's own decision
// (scope branch) is a mark only, and no project decision overwrites it.

// Triage follows the finding (docs/findings.md; the items are
// schema.Decision, decisions.go). A decision made on one branch's issue with scope
// project (the default) is stored for the finding's identity (project,
// tool, fingerprint) and carried, through the issue write path, onto the
// identity's issue of every other branch: at once (DecideIssue reads
// those issues by key: the project's branches come from its heads and
// branch scope summaries, each issue's id from IssueID) and by every
// later scan that creates or reopens one (applyIssues), a scan that
// wrote while the decision was made included (CatchUp). open and fixed stay per branch:
// a decision neither reopens nor fixes, a fixed issue keeps fixed, and a
// branch's own decision (scope branch) is never overwritten. Setting
// open with scope project withdraws the project decision from every issue
// that carries it. Each moved issue's history says where the decision came
// from.

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
		_, err := x.update(ctx, companyID, chunk, func(existing map[string]findings.Issue, _ int) (edit, error) {
			var changes []findings.IssueChange
			for _, id := range chunk {
				e, ok := existing[id]
				if !ok {
					continue
				}
				if after, ok := follow(e, src, withdraw); ok {
					changes = append(changes, findings.IssueChange{Before: &e, After: &after, By: by, Reason: why})
				}
			}
			return edit{changes: changes}, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// follow is e after src's decision (or its withdrawal) reaches it, and
// whether that changes it: a fixed issue and a branch's own decision stay;
// a withdrawal reopens only what carries the project decision and is not
// fixed (a fixed one only loses the mark). An accepted risk's terms (end,
// owner, who accepted it and when) go with it.
func follow(e, src findings.Issue, withdraw bool) (findings.Issue, bool) {
	after := e
	switch {
	case withdraw && e.Decision.Scope != schema.DecisionProject:
		return e, false
	case withdraw && e.Status == "fixed": // a withdrawal reopens nothing the code fixed
		after.Decision = schema.DecisionMark{}
	case withdraw:
		after.Status, after.Reason, after.Decision = "open", "", schema.DecisionMark{}
	case e.Status == "fixed" || e.Decision.Scope == schema.DecisionBranch:
		return e, false
	default:
		after.Status, after.Reason, after.AssignedTo, after.Decision, after.Terms = src.Status, src.Reason, src.AssignedTo, src.Decision, src.Terms
	}
	return after, after != e
}

// CatchUp brings the issues a scan wrote that take the project's
// decisions (takers: those it created or moved into open or suppressed)
// in line with the decisions as they are now, read again consistently
// after the scan's writes (see findings.catchUpDecisions): each whose
// mark disagrees follows them as spread would have carried them. In the
// common case nothing disagrees and no issue is read. The changes go
// through the issue write path under the scan's lease (ctx's fence).
func (x *Triage) CatchUp(ctx context.Context, companyID int64, sc scans.Scan, takers []findings.Issue) error {
	decided, err := x.ToolDecisions(ctx, companyID, sc.ProjectID, sc.Tool)
	if err != nil {
		return err
	}
	now := x.t.Clock()
	var ids []string
	for _, i := range takers {
		if _, _, ok := catchUp(i, decided, now, sc.ID); ok {
			ids = append(ids, i.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	_, err = x.update(ctx, companyID, ids, func(current map[string]findings.Issue, _ int) (edit, error) {
		var changes []findings.IssueChange
		for _, id := range ids {
			if e, ok := current[id]; ok {
				if after, by, ok := catchUp(e, decided, now, sc.ID); ok {
					changes = append(changes, findings.IssueChange{Before: &e, After: &after, By: by, Reason: catchUpNote(after)})
				}
			}
		}
		return edit{changes: changes}, nil
	})
	return err
}

// catchUp is e after the project's decisions reach it, who moved it, and
// whether they do: a decision withdrawn leaves the issue that carried it,
// a decision made or changed reaches it as it reaches the issues a scan
// writes (open or suppressed, no decision of its branch), an accepted
// risk that ended reaches nothing (nor leaves: the end is the SLA job's).
func catchUp(e findings.Issue, decided map[string]schema.Decision, now time.Time, scanID string) (findings.Issue, findings.Actor, bool) {
	d, ok := decided[e.Fingerprint]
	switch {
	case !ok && e.Decision.Scope == schema.DecisionProject:
		after, moved := follow(e, findings.Issue{}, true)
		return after, findings.Actor{ScanID: scanID}, moved // the scan withdrew it
	case !ok || d.Ended(now) || e.Decision == d.Mark:
		return e, findings.Actor{}, false
	case e.Decision.Scope == schema.DecisionProject, e.Decision.Scope == "" && (e.Status == "open" || e.Status == findings.Suppressed):
		src := findings.Issue{Status: d.Status, Reason: d.Reason, AssignedTo: d.AssignedTo, Decision: d.Mark, Terms: d.Terms}
		after, moved := follow(e, src, false)
		return after, findings.Actor{UserID: d.Mark.DecidedBy}, moved
	}
	return e, findings.Actor{}, false
}

// catchUpNote is the history's reason for a move catchUp made.
func catchUpNote(after findings.Issue) string {
	if after.Decision.Scope == "" {
		return "project decision withdrawn while the scan was written"
	}
	return findings.DecisionNote(after.Decision.Source, after.Decision.DecidedBy)
}

// TxPutDecision is the write of d (keyed by its identity) for a
// transaction of the issue write path.
func (x *Triage) TxPutDecision(companyID int64, dec schema.Decision) (types.TransactWriteItem, error) {
	dec.Key = schema.DecisionKey(companyID, dec.ProjectID, dec.Tool, dec.Fingerprint)
	return x.t.TxPut(dec, nil)
}

// TxDeleteDecision is the removal of an identity's decision (whether or
// not one exists) for a transaction of the issue write path.
func (x *Triage) TxDeleteDecision(companyID, projectID int64, tool, fingerprint string) types.TransactWriteItem {
	return x.t.TxDeleteKey(schema.DecisionKey(companyID, projectID, tool, fingerprint))
}

// ToolDecisions reads every decision of a project for one tool, by
// fingerprint: what a scan of that tool carries onto the issues it creates
// or reopens. One consistent query (a scan reads them again after its
// writes, see CatchUp), whose cost grows with the
// project's decisions of the tool, not with the scan's findings.
func (x *Triage) ToolDecisions(ctx context.Context, companyID, projectID int64, tool string) (map[string]schema.Decision, error) {
	var all []schema.Decision
	kc := ddb.PKBeginsWith(schema.DecisionPK(companyID, projectID), schema.DecisionToolPrefix(tool))
	if err := x.t.QueryAllConsistent(ctx, kc, &all); err != nil {
		return nil, err
	}
	out := make(map[string]schema.Decision, len(all))
	for _, dec := range all {
		if dec.Tool == tool {
			out[dec.Fingerprint] = dec
		}
	}
	return out, nil
}
