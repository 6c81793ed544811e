package schema

import (
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// DecisionPK is the partition of a project's triage decisions (one item
// per finding identity, Decision).
func DecisionPK(companyID, projectID int64) string {
	return fmt.Sprintf("%s#DECISIONS#%012d", CompanyPK(companyID), projectID)
}

// DecisionToolPrefix starts the sort key of every decision of one tool.
func DecisionToolPrefix(tool string) string { return "D#" + ShortHash(tool, 16) + "#" }

// DecisionKey is the decision item of a finding identity (tool and
// fingerprint) within a project; fingerprints are hashed, as they may be
// long and hold any character.
func DecisionKey(companyID, projectID int64, tool, fingerprint string) ddb.Key {
	return ddb.Key{PK: DecisionPK(companyID, projectID), SK: DecisionToolPrefix(tool) + ShortHash(fingerprint, 32)}
}

// The scopes of a decision: made for the finding on every branch of its
// project, or for one branch's issue only.
const (
	DecisionProject = "project"
	DecisionBranch  = "branch"
)

// DecisionMark is what an issue shows of the decision it carries: its
// scope, who made it, when, and on which branch (Source). Zero when the
// issue carries none.
type DecisionMark struct {
	Scope     string `dynamodbav:"scope"`
	DecidedBy int64  `dynamodbav:"decided_by,omitempty"` // 0: no person (the demo seed)
	DecidedAt string `dynamodbav:"decided_at"`
	Source    string `dynamodbav:"source"`
}

// Decision is the project-wide triage of one finding identity (see
// docs/findings.md, "Decisions follow the finding"), at DecisionKey.
type Decision struct {
	ddb.Key
	ProjectID   int64  `dynamodbav:"project_id"`
	Tool        string `dynamodbav:"tool"`
	Fingerprint string `dynamodbav:"fingerprint"`
	Status      string `dynamodbav:"status"`
	Reason      string `dynamodbav:"reason,omitempty"`
	AssignedTo  int64  `dynamodbav:"assigned_to,omitempty"`
	// IssueID is the issue it was made on (on Mark.Source's branch).
	IssueID string       `dynamodbav:"issue_id"`
	Mark    DecisionMark `dynamodbav:"mark"`
	// Terms are an accepted risk's end, owner and acceptance, which every
	// branch's issue carries as they are.
	Terms Terms `dynamodbav:"terms"`
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
