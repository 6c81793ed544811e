// Package decisions keeps the triage decisions that follow a finding
// (docs/findings.md, "Decisions follow the finding"). A finding's identity within its project is its tool
// and fingerprint; every branch has its own issue of it, but a person's
// triage (a status other than open and fixed, its reason, the assignee) is
// about the finding, so it is stored once per identity:
//
//	C#<co>#DECISIONS#<project>  D#<tool hash>#<fingerprint hash>   the decision
//
// and carried onto the identity's issues of every branch by the store's
// issue write path (store/triage/decide.go): at once onto the issues that exist,
// and by every later scan onto the issues it creates or reopens (one query
// of the project's decisions of the scan's tool per scan). An issue shows
// the decision it carries as a Mark; a branch's own decision (scope
// branch) is a Mark only, and no project decision overwrites it.
package decisions

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/acceptances"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// The scopes of a decision.
const (
	Project = "project"
	Branch  = "branch"
)

// Mark is what an issue shows of the decision it carries: its scope, who
// made it, when, and on which branch (Source). Zero when the issue carries
// none.
type Mark struct {
	Scope     string `dynamodbav:"scope"`
	DecidedBy int64  `dynamodbav:"decided_by,omitempty"` // 0: no person (the demo seed)
	DecidedAt string `dynamodbav:"decided_at"`
	Source    string `dynamodbav:"source"`
}

// Decision is the project-wide triage of one finding identity.
type Decision struct {
	ddb.Key
	ProjectID   int64  `dynamodbav:"project_id"`
	Tool        string `dynamodbav:"tool"`
	Fingerprint string `dynamodbav:"fingerprint"`
	Status      string `dynamodbav:"status"`
	Reason      string `dynamodbav:"reason,omitempty"`
	AssignedTo  int64  `dynamodbav:"assigned_to,omitempty"`
	// IssueID is the issue it was made on (on Mark.Source's branch).
	IssueID string `dynamodbav:"issue_id"`
	Mark    Mark   `dynamodbav:"mark"`
	// Terms are an accepted risk's end, owner and acceptance, which every
	// branch's issue carries as they are.
	Terms acceptances.Terms `dynamodbav:"terms"`
}

// Ended reports whether d is an accepted risk whose end is not after now:
// it is carried no more (the issues that carry it reopen as it ends).
func (d Decision) Ended(now time.Time) bool {
	if d.Status != "accepted_risk" || d.Terms.ExpiresAt == "" {
		return false
	}
	end, err := d.Terms.Expires()
	return err == nil && !end.After(now)
}

// Decisions reads and writes decision items of the store's table.
type Decisions struct{ t *ddb.Table }

// New returns the decisions of table t.
func New(t *ddb.Table) *Decisions { return &Decisions{t: t} }

// TxPutDecision is the write of d (keyed by its identity) for a
// transaction of the issue write path.
func (d *Decisions) TxPutDecision(companyID int64, dec Decision) (types.TransactWriteItem, error) {
	dec.Key = schema.DecisionKey(companyID, dec.ProjectID, dec.Tool, dec.Fingerprint)
	return d.t.TxPut(dec, nil)
}

// TxDeleteDecision is the removal of an identity's decision (whether or
// not one exists) for a transaction of the issue write path.
func (d *Decisions) TxDeleteDecision(companyID, projectID int64, tool, fingerprint string) types.TransactWriteItem {
	return d.t.TxDeleteKey(schema.DecisionKey(companyID, projectID, tool, fingerprint))
}

// ToolDecisions reads every decision of a project for one tool, by
// fingerprint: what a scan of that tool carries onto the issues it creates
// or reopens. One query, whose cost grows with the project's decisions of
// the tool, not with the scan's findings.
func (d *Decisions) ToolDecisions(ctx context.Context, companyID, projectID int64, tool string) (map[string]Decision, error) {
	var all []Decision
	kc := ddb.PKBeginsWith(schema.DecisionPK(companyID, projectID), schema.DecisionToolPrefix(tool))
	if err := d.t.QueryAll(ctx, "", kc, true, &all); err != nil {
		return nil, err
	}
	out := make(map[string]Decision, len(all))
	for _, dec := range all {
		if dec.Tool == tool {
			out[dec.Fingerprint] = dec
		}
	}
	return out, nil
}
