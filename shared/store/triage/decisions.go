package triage

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
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
// wrote while the decision was made included (catchUpDecisions). open and fixed stay per branch:
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
				if after, ok := findings.Follow(e, src, withdraw); ok {
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
// writes, see findings.catchUpDecisions), whose cost grows with the
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
