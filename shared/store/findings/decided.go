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

// Follow is e after src's decision (or its withdrawal) reaches it, and
// whether that changes it: a fixed issue and a branch's own decision stay;
// a withdrawal reopens only what carries the project decision and is not
// fixed (a fixed one only loses the mark). An accepted risk's terms (end,
// owner, who accepted it and when) go with it.
func Follow(e, src Issue, withdraw bool) (Issue, bool) {
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

// catchUpDecisions closes the window between a scan's read of the
// project's decisions (readApplyInputs) and its writes: a decision made,
// changed or withdrawn meanwhile can miss an issue the scan created or
// reopened, since the decider carries it only onto issues that exist and
// the scan took what it had read. So the scan reads the decisions again
// (consistently) after its writes, and each issue it created (in this
// attempt or an earlier one) or reopened whose mark disagrees with them
// follows them as the decider's spread would carry them (Follow). One of
// the two sides reads what the other wrote: the decider writes the
// decision, then reads the branches (the head names the branch before the
// scan writes) and their issues; the scan writes its issues, then reads the
// decisions. In the common case nothing disagrees and nothing more is read.
func (x *Findings) catchUpDecisions(ctx context.Context, companyID int64, sc scans.Scan, w *applyWrites) error {
	decided, err := x.d.Decisions.ToolDecisions(ctx, companyID, sc.ProjectID, sc.Tool)
	if err != nil {
		return err
	}
	now := x.t.Clock()
	var ids []string
	for _, i := range decisionTakers(w) {
		if _, _, ok := catchUp(i, decided, now); ok {
			ids = append(ids, i.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return x.t.Retrying(ctx, func() error {
		current, err := x.issuesByID(ctx, companyID, ids)
		if err != nil {
			return err
		}
		var changes []IssueChange
		for _, id := range ids {
			if e, ok := current[id]; ok {
				if after, by, ok := catchUp(e, decided, now); ok {
					if by == (Actor{}) { // a withdrawal: the scan moved it
						by.ScanID = sc.ID
					}
					changes = append(changes, IssueChange{Before: &e, After: &after, By: by, Reason: catchUpNote(after)})
				}
			}
		}
		n, err := x.commitIssues(ctx, companyID, changes)
		for _, c := range changes[:n] {
			w.updated = append(w.updated, *c.After, *c.Before)
		}
		return err
	})
}

// decisionTakers are the issues of the scan a project decision reaches
// as the scan writes them (takeDecisions): those it created (or an
// earlier attempt of it did) and those it moved into open or suppressed.
func decisionTakers(w *applyWrites) []Issue {
	out := slices.Clip(w.fresh)
	for n := 0; n+1 < len(w.updated); n += 2 {
		after, before := w.updated[n], w.updated[n+1]
		if after.Status != before.Status && (after.Status == "open" || after.Status == Suppressed) {
			out = append(out, after)
		}
	}
	return out
}

// catchUp is e after the project's decisions reach it, who moved it, and
// whether they do: a decision withdrawn leaves the issue that carried it,
// a decision made or changed reaches it as it reaches the issues a scan
// writes (open or suppressed, no decision of its branch), an accepted
// risk that ended reaches nothing (nor leaves: the end is the SLA job's).
func catchUp(e Issue, decided map[string]schema.Decision, now time.Time) (Issue, Actor, bool) {
	d, ok := decided[e.Fingerprint]
	switch {
	case !ok && e.Decision.Scope == schema.DecisionProject:
		after, moved := Follow(e, Issue{}, true)
		return after, Actor{}, moved
	case !ok || d.Ended(now) || e.Decision == d.Mark:
		return e, Actor{}, false
	case e.Decision.Scope == schema.DecisionProject, e.Decision.Scope == "" && (e.Status == "open" || e.Status == Suppressed):
		src := Issue{Status: d.Status, Reason: d.Reason, AssignedTo: d.AssignedTo, Decision: d.Mark, Terms: d.Terms}
		after, moved := Follow(e, src, false)
		return after, Actor{UserID: d.Mark.DecidedBy}, moved
	}
	return e, Actor{}, false
}

// catchUpNote is the history's reason for a move catchUp made.
func catchUpNote(after Issue) string {
	if after.Decision.Scope == "" {
		return "project decision withdrawn while the scan was written"
	}
	return DecisionNote(after.Decision.Source, after.Decision.DecidedBy)
}
