package findings

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/scans"
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

// projectBranches are the branches of a project that have (or may have)
// issues: those its heads name (a scan's lease names its branch before
// the scan writes an issue, see takeLease) and, for heads taken before
// heads named their branch, those of its branch scope summaries. Both are
// bounded ranges of the company's partition, read consistently: a
// decision written before this read reaches every issue a scan that named
// its branch before it creates.
func (x *Findings) projectBranches(ctx context.Context, companyID, projectID int64) ([]string, error) {
	var heads []struct {
		Branch string `dynamodbav:"branch"`
	}
	pk := schema.CompanyPK(companyID)
	if err := x.t.QueryAllConsistent(ctx, ddb.PKBeginsWith(pk, schema.ProjectHeadsPrefix(projectID)), &heads); err != nil {
		return nil, err
	}
	var sums []schema.ScopeSummary
	if err := x.t.QueryAllConsistent(ctx, ddb.PKBeginsWith(pk, schema.BranchSummariesPrefix(projectID)), &sums); err != nil {
		return nil, err
	}
	var out []string
	for _, h := range heads {
		out = append(out, h.Branch)
	}
	for _, sum := range sums {
		out = append(out, sum.Branch)
	}
	slices.Sort(out)
	return slices.DeleteFunc(slices.Compact(out), func(b string) bool { return b == "" }), nil
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

// catchUpDecisions closes the window between a scan's read of the
// project's decisions (readApplyInputs) and its writes: a decision made,
// changed or withdrawn meanwhile can miss an issue the scan created or
// reopened, since the decider carries it only onto issues that exist and
// the scan took what it had read. So after its writes the scan has the
// triage area bring those issues in line with the decisions as they now
// are (Deps.Decisions.CatchUp, the triage area's decisions.go). One of the
// two sides reads what the other wrote: the decider writes the decision,
// then reads the branches (the head names the branch before the scan
// writes) and their issues; the scan writes its issues, then reads the
// decisions.
func (x *Findings) catchUpDecisions(ctx context.Context, companyID int64, sc scans.Scan, w *applyWrites) error {
	takers := slices.Clip(w.fresh) // created by the scan (or an earlier attempt of it)
	for n := 0; n+1 < len(w.updated); n += 2 {
		after, before := w.updated[n], w.updated[n+1]
		if after.Status != before.Status && (after.Status == "open" || after.Status == Suppressed) {
			takers = append(takers, after) // moved into open or suppressed: takeDecisions' other takers
		}
	}
	return x.d.Decisions.CatchUp(ctx, companyID, sc, takers)
}
