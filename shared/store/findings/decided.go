package findings

import (
	"context"
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Decisions that follow the finding: a project decision reaches the
// issues a scan creates or reopens (takeDecisions, decidedHistory);
// making one and carrying it to the other branches is the triage area's.

// Decisive reports whether a status is a decision: open and fixed are
// facts of a branch's scans, suppressed comes from its code.
func Decisive(status string) bool {
	return status != "open" && status != "fixed" && status != Suppressed
}

// projectBranches are the branches of a project that have (or had)
// issues: its branch scope summaries, one bounded range of the company's
// partition.
func (x *Findings) projectBranches(ctx context.Context, companyID, projectID int64) ([]string, error) {
	var sums []schema.ScopeSummary
	prefix := schema.BranchSummariesPrefix(projectID)
	if err := x.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), prefix), true, &sums); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(sums))
	for _, sum := range sums {
		if sum.Branch != "" {
			out = append(out, sum.Branch)
		}
	}
	return out, nil
}

// Person names who made a decision in its history entries.
func Person(userID int64) string {
	if userID == 0 {
		return "no one in particular"
	}
	return fmt.Sprintf("user %d", userID)
}

// DecisionNote is the history's reason for a move a decision made.
func DecisionNote(branch string, userID int64) string {
	return "decision on " + branch + " by " + Person(userID)
}

// takeDecisions gives the project's decisions (by fingerprint) to the
// scan's changes that create an issue or move one into open or
// suppressed (a reopening, a suppression added or removed), unless the
// issue carries its branch's own decision or the decision is an
// acceptance whose end is not after now.
func takeDecisions(changes []IssueChange, decided map[string]schema.Decision, now time.Time) {
	if len(decided) == 0 {
		return
	}
	for n := range changes {
		a, b := changes[n].After, changes[n].Before
		if a == nil || Decisive(a.Status) || a.Status == "fixed" || a.Decision.Scope == schema.DecisionBranch ||
			b != nil && b.Status == a.Status {
			continue
		}
		d, ok := decided[a.Fingerprint]
		if !ok || d.Ended(now) {
			continue
		}
		a.Status, a.Reason, a.AssignedTo, a.Decision, a.Terms = d.Status, d.Reason, d.AssignedTo, d.Mark, d.Terms
		note := DecisionNote(d.Mark.Source, d.Mark.DecidedBy)
		if changes[n].Reason != "" {
			note = changes[n].Reason + "; " + note
		}
		changes[n].Reason = note
	}
}

// decidedEntry is the history entry of a new issue that arrives with a
// project decision (creation is otherwise no entry), written with the
// issue (bulkCreate). Its key names the issue's first detection, so a
// retry writes the same entry.
func decidedEntry(companyID int64, c IssueChange) (HistoryEntry, bool) {
	if c.After.Decision.Scope != schema.DecisionProject {
		return HistoryEntry{}, false
	}
	return NewHistory(companyID, IssueChange{Before: &Issue{Status: "open"}, After: c.After, By: c.By, Reason: c.Reason}, c.After.CreatedAt, 0), true
}
