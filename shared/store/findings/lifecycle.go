package findings

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/lease"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// The findings lifecycle. A complete scan of tool T (and upload category
// C, see categories.go) on a project's branch is the new truth for T and C
// there:
//
//   - a finding whose issue does not exist creates it (open);
//   - a fixed issue that is reported again is reopened (open, reopen_count+1);
//   - what the code suppresses is Suppressed (see suppressed.go);
//   - any other reported issue keeps its status (triage survives), and is
//     rewritten only when what it shows changed (urgency, place, rule, title);
//   - an open or fix_in_progress issue of the previous scan of T on the
//     branch that this scan does not report becomes fixed (when, by which
//     scan); dismissed issues (false_positive, accepted_risk, duplicate) keep
//     their status.
//
// Which issues a scan reported is kept as membership chunks (256 sorted
// ids to an item, see scans/members.go), which also serve the scan's issue
// list; the branch's head item names the last scan applied, so the
// previous truth is that scan's members. Scans of one (project, branch,
// tool) are applied one at a time under a lease on the head item; a scan
// older than the head (uploaded late) adds its findings but fixes and
// reopens nothing.

// ScanHead is the state of one tool on one branch of a project.
type ScanHead struct {
	ddb.Key
	ScanID        string `dynamodbav:"scan_id,omitempty"`
	ScanCreatedAt string `dynamodbav:"scan_created_at,omitempty"`
	LeaseOwner    string `dynamodbav:"lease_owner,omitempty"`
	LeaseUntil    int64  `dynamodbav:"lease_until,omitempty"` // unix ms
	// Journal names the scan whose journal was written last (see
	// internal/scanjournal): the next holder settles it before anything else.
	Journal string `dynamodbav:"journal,omitempty"`
	// adopted is true when the scan's category had no scan yet and takes
	// over the uncategorised head's truth (categories.go); never stored.
	adopted bool
}

// headBranchAttr is the head's attribute that names its branch (keys
// hold only its hash).
const headBranchAttr = "branch"

func headKey(companyID, projectID int64, branch, tool string) ddb.Key {
	return schema.HeadKey(companyID, projectID, branch, tool)
}

// ApplyResult says what a scan changed.
type ApplyResult struct {
	Created, Reopened, Fixed, Updated, Unchanged int
	// Suppressed counts existing issues the code now suppresses (see
	// suppressed.go); Reopened includes those whose suppression was removed.
	Suppressed int
	// Late is true when a newer scan of the branch was applied first: this
	// one added its findings but fixed and reopened nothing.
	Late bool
}

// ApplyScan stores the findings of a complete scan (issues prepared by the
// caller, ids from IssueID) and applies the lifecycle above, then completes
// the scan: what that writes (Deps.Completion: the scans area's
// CompletionItems) goes in the fenced transaction that moves the head to
// it. It is idempotent: applying the same scan again (a retried
// upload or a redelivered message) changes nothing more. Two scans of the
// same branch and tool never interleave.
func (x *Findings) ApplyScan(ctx context.Context, companyID int64, sc scans.Scan, found []Issue) (ApplyResult, error) {
	for n := range found {
		if found[n].Status != Suppressed {
			found[n].Status, found[n].Reason = "open", "" // what a new issue starts as; the lifecycle decides
		}
		if err := found[n].Prepare(companyID, x.t.Stamp()); err != nil {
			return ApplyResult{}, err
		}
	}
	// Each attempt holds the lease under a token of its own: two attempts of
	// the same scan (a client retrying while the first still runs) queue too.
	head, f, err := x.takeLease(ctx, companyID, sc, sc.ID+"/"+uuid.NewString())
	if err != nil {
		return ApplyResult{}, err
	}
	// Its writes are fenced (fence.go): when the lease is lost they are
	// refused, and the apply ends with ErrLeaseLost, as it does when an
	// extension is refused, to be tried again from scratch.
	lctx, stop := x.keepLease(ctx, companyID, sc, f.Owner)
	lctx = lease.WithFence(lctx, f)
	if head, err = x.categoryState(lctx, companyID, sc, head); err != nil {
		stop()
		x.releaseLease(ctx, companyID, sc, f.Owner, false)
		return ApplyResult{}, lease.LostCause(lctx, err)
	}
	res, err := x.applyLeased(lctx, companyID, sc, f, head, found)
	stop()
	if err != nil {
		x.releaseLease(ctx, companyID, sc, f.Owner, errors.Is(err, errCutOff))
		return res, lease.LostCause(lctx, err)
	}
	return res, nil
}

func (x *Findings) applyLeased(ctx context.Context, companyID int64, sc scans.Scan, f lease.Fence, head ScanHead, found []Issue) (ApplyResult, error) {
	if head.Journal != "" {
		if err := x.journal.Settle(ctx, companyID, head.Journal); err != nil {
			return ApplyResult{}, err
		}
	}
	// The head's scan: the previous truth, and the ids its findings answer
	// to by their other identity (aliases.go).
	var head0 headMembers
	if head.ScanID != "" {
		var err error
		if head0.ids, head0.aliases, err = scans.Members(ctx, x.t, companyID, head.ScanID); err != nil {
			return ApplyResult{}, err
		}
	}
	if err := resolveAliases(found, head0.ids, head0.aliases); err != nil {
		return ApplyResult{}, err
	}
	// The scan's membership goes out beside its issues: only scans applied
	// after this one completes read it.
	var members errgroup.Group
	members.Go(func() error { return scans.PutMembers(ctx, x.t, companyID, sc.ID, IDs(found), Aliases(found)) })
	res, fresh, err := x.applyIssues(ctx, companyID, sc, f, head, head0.ids, found)
	if merr := members.Wait(); err == nil {
		err = merr
	}
	if err != nil {
		return res, err
	}
	completion, err := x.d.Completion.CompletionItems(ctx, sc, applied(found, fresh))
	if err != nil {
		return res, err
	}
	return res, x.t.Retrying(ctx, func() error {
		return x.completeScan(ctx, companyID, sc, f, !res.Late, head.adopted, completion)
	})
}

// applyIssues applies the lifecycle to the scan's issues and settles their
// counters; it returns the scan's fresh issues (its completion's events
// name them). It reads what every attempt shares once (readApplyInputs),
// then each attempt reads the issues that exist, plans the changes and
// writes them (applyAttempt), and last settles the counters the writes
// moved.
func (x *Findings) applyIssues(ctx context.Context, companyID int64, sc scans.Scan, f lease.Fence, head ScanHead, headIDs []string, found []Issue) (ApplyResult, []Issue, error) {
	var res ApplyResult
	res.Late = head.ScanID != "" && head.ScanID != sc.ID && head.ScanCreatedAt > sc.CreatedAt
	in, err := x.readApplyInputs(ctx, companyID, sc, head, headIDs, found, !res.Late)
	if err != nil {
		return res, nil, err
	}
	var w applyWrites
	settled := map[ddb.Key]bool{} // counters the journal settled (bulkCreate)
	err = x.t.Retrying(ctx, func() error {
		res = ApplyResult{Late: res.Late}
		return x.applyAttempt(ctx, companyID, sc, f, found, &in, &res, &w, settled)
	})
	if err != nil {
		return res, nil, err
	}
	if err := x.catchUpDecisions(ctx, companyID, sc, &w); err != nil {
		return res, nil, err
	}
	if err := x.settleApplied(ctx, companyID, found, w, settled); err != nil {
		return res, nil, err
	}
	return res, w.fresh, nil
}

// applyInputs is what every attempt of applying a scan's issues shares,
// read once before the first.
type applyInputs struct {
	truth    bool     // the scan is the branch's new truth (not late)
	previous []string // the previous truth's issues: what this scan may fix
	rules    []triagemodel.Rule
	decided  map[string]schema.Decision
	// unwritten is true while no issue of the scan can exist yet (see
	// readApplyInputs); the first attempt clears it.
	unwritten bool
}

// readApplyInputs reads, in this order, the previous truth's issues (when
// the scan replaces another scan's truth), the project's active triage
// rules and the tool's project decisions.
func (x *Findings) readApplyInputs(ctx context.Context, companyID int64, sc scans.Scan, head ScanHead, headIDs []string, found []Issue, truth bool) (applyInputs, error) {
	in := applyInputs{truth: truth}
	if truth && head.ScanID != "" && head.ScanID != sc.ID {
		var err error
		if in.previous, err = x.ownTruth(ctx, companyID, sc, head, headIDs, found); err != nil {
			return in, err
		}
	}
	// The triage rules are read once: every attempt applies the same.
	var err error
	if in.rules, err = x.d.Rules.ActiveTriageRules(ctx, companyID, sc.ProjectID); err != nil {
		return in, err
	}
	// Issue ids name their branch and tool, and only a lease holder of the
	// head creates them: when the head did not exist before this lease, no
	// issue of the scan can exist yet, and the first attempt reads none (a
	// new branch's first scan of 25,000 findings spares 250 reads). A
	// retry reads: the attempt before may have written some.
	in.unwritten = head.PK == ""
	in.decided, err = x.d.Decisions.ToolDecisions(ctx, companyID, sc.ProjectID, sc.Tool) // see decided.go
	return in, err
}

// applyWrites is what the last attempt of applying a scan's issues wrote:
// the issues it touched (after and before), the updated ones (after and
// before) and the scan's fresh issues.
type applyWrites struct {
	touched, updated, fresh []Issue
}

// applyAttempt is one attempt at applying the scan's issues: it reads the
// issues that exist (unless none can), plans the lifecycle's changes (with
// decisions and rules taken) and writes them: the created issues (with the
// history of decisions they came with), then the updated ones. It counts into res and records
// what it wrote in w.
func (x *Findings) applyAttempt(ctx context.Context, companyID int64, sc scans.Scan, f lease.Fence, found []Issue, in *applyInputs, res *ApplyResult, w *applyWrites, settled map[ddb.Key]bool) error {
	ids, reported := scanIssueIDs(found, in.previous)
	existing := map[string]Issue{}
	if !in.unwritten {
		var err error
		if existing, err = x.issuesByID(ctx, companyID, ids); err != nil {
			return err
		}
	}
	in.unwritten = false
	changes := lifecycleChanges(sc, found, in.previous, reported, existing, in.truth, res)
	takeDecisions(changes, in.decided, x.t.Clock())
	created := ruleCreations(in.rules, changes)
	w.fresh = freshIssues(w.fresh, sc, found, existing, created)
	creates, updates := w.sortChanges(changes)
	if err := x.bulkCreate(ctx, companyID, sc, f, creates, settled); err != nil {
		return err
	}
	_, err := x.commitIssues(ctx, companyID, updates)
	return err
}

// scanIssueIDs are the ids of the scan's issues followed by those of the
// previous truth it did not report, and the set of the reported ones.
func scanIssueIDs(found []Issue, previous []string) ([]string, map[string]bool) {
	ids := IDs(found)
	reported := map[string]bool{}
	for _, id := range ids {
		reported[id] = true
	}
	for _, id := range previous {
		if !reported[id] {
			ids = append(ids, id)
		}
	}
	return ids, reported
}

// freshIssues are the issues new in this scan, reusing fresh's storage:
// created now (as decisions and rules left them), or by an earlier attempt
// of it.
func freshIssues(fresh []Issue, sc scans.Scan, found []Issue, existing map[string]Issue, created map[string]*Issue) []Issue {
	fresh = slices.Grow(fresh[:0], len(found))
	for _, f := range found {
		if e, ok := existing[f.ID]; !ok {
			fresh = append(fresh, *created[f.ID])
		} else if e.ScanID == sc.ID {
			fresh = append(fresh, e)
		}
	}
	return fresh
}

// sortChanges splits the changes into creations and updates, and records
// in w the issues they touch and update (reusing w's storage).
func (w *applyWrites) sortChanges(changes []IssueChange) (creates, updates []IssueChange) {
	// Sized up front: a scan's slices of issues run to megabytes, and
	// growing them copies each several times.
	w.touched, w.updated = slices.Grow(w.touched[:0], 2*len(changes)), w.updated[:0]
	creates = make([]IssueChange, 0, len(changes))
	for _, c := range changes {
		w.touched = append(w.touched, *c.issue())
		if c.Before == nil {
			creates = append(creates, c)
		} else {
			w.touched = append(w.touched, *c.Before)
			w.updated = append(w.updated, *c.issue(), *c.Before)
			updates = append(updates, c)
		}
	}
	return creates, updates
}

// settleApplied settles the counters of the issues the scan touched or
// found, but for those the journal settled (bulkCreate) that no update
// moved afterwards: only those are read again.
func (x *Findings) settleApplied(ctx context.Context, companyID int64, found []Issue, w applyWrites, settled map[ddb.Key]bool) error {
	moved := map[ddb.Key]bool{}
	for _, k := range CounterKeys(companyID, w.updated) {
		moved[k] = true
	}
	keys := slices.DeleteFunc(CounterKeys(companyID, w.touched, found), func(k ddb.Key) bool { return settled[k] && !moved[k] })
	return x.settleCounters(ctx, companyID, keys)
}

// applied is what the scan's apply hands its completion: how many
// findings it reported, its fresh issues, and how many of them are new to
// act on (all but those suppressed as they came).
func applied(found, fresh []Issue) scans.Applied {
	out := scans.Applied{Findings: len(found), Fresh: make([]scans.FreshIssue, len(fresh))}
	for n, i := range fresh {
		out.Fresh[n] = scans.FreshIssue{ID: i.ID, Title: i.Title, FilePath: i.FilePath, Line: i.Line, CWE: i.CWE,
			Urgency: i.Urgency, Status: i.Status}
		if i.Status != Suppressed {
			out.New++
		}
	}
	return out
}

// lifecycleChanges computes what applying the scan changes, given the
// issues that exist (by id).
func lifecycleChanges(sc scans.Scan, found []Issue, previous []string, reported map[string]bool, existing map[string]Issue, truth bool, res *ApplyResult) []IssueChange {
	by := Actor{ScanID: sc.ID}
	changes := make([]IssueChange, 0, len(found))
	for n := range found {
		f := found[n]
		e, ok := existing[f.ID]
		switch {
		case !ok:
			f.ScanID, f.LastSeenScanID = sc.ID, sc.ID // open, or Suppressed as ingestion found it
			changes = append(changes, IssueChange{After: &f, By: by})
			res.Created++
		case truth:
			if e.UrgencyRuleID != "" { // a triage rule's urgency outlasts the scanner's
				f.Urgency = e.Urgency
			}
			status, why := reportedStatus(e, f)
			reason := e.Reason
			if status == Suppressed {
				reason = f.Reason // the suppression's justification
			} else if e.Status == Suppressed {
				reason = "" // the justification went with the suppression
			}
			if status == e.Status && reason == e.Reason && !shownChanged(e, f) {
				res.Unchanged++
				continue
			}
			after := redetected(e, f)
			after.LastSeenScanID, after.Reason = sc.ID, reason
			if status != e.Status {
				after.Status, after.FixedAt, after.FixedScanID = status, "", ""
			}
			switch {
			case status == e.Status:
				res.Updated++
			case status == Suppressed:
				res.Suppressed++
			default:
				if e.Status == "fixed" {
					after.ReopenCount++
				}
				res.Reopened++
			}
			changes = append(changes, IssueChange{Before: &e, After: &after, By: by, Reason: why})
		default:
			res.Unchanged++
		}
	}
	for _, id := range previous {
		e, ok := existing[id]
		if reported[id] || !ok || !fixable(e.Status) {
			continue
		}
		after := e
		after.Status, after.FixedAt, after.FixedScanID = "fixed", sc.CreatedAt, sc.ID
		if e.Status == Suppressed {
			after.Reason = "" // the justification went with the code
		}
		after.LastSeenScanID = e.LastSeenScanID
		changes = append(changes, IssueChange{Before: &e, After: &after, By: by, Reason: "not reported by the scan"})
		res.Fixed++
	}
	return changes
}

// redetected is e with what the new report shows of it; identity, first
// detection and triage stay.
func redetected(e, f Issue) Issue {
	out := e
	out.Urgency, out.CWE, out.FilePath, out.Line = f.Urgency, f.CWE, f.FilePath, f.Line
	out.RuleID, out.Title, out.Message, out.Snippet = f.RuleID, f.Title, f.Message, f.Snippet
	out.CodeStart, out.Code = f.CodeStart, f.Code
	out.Fix = f.Fix
	_ = out.setKeys() // CreatedAt was valid when e was stored
	return out
}

func shownChanged(e, f Issue) bool {
	return e.Urgency != f.Urgency || e.CWE != f.CWE || e.FilePath != f.FilePath || e.Line != f.Line ||
		e.RuleID != f.RuleID || e.Title != f.Title || e.Message != f.Message || e.Snippet != f.Snippet ||
		e.CodeStart != f.CodeStart || e.Code != f.Code || !sameFix(e.Fix, f.Fix)
}

// takeLease makes the scan the only writer of its branch and tool (see
// internal/lease); it returns the head as it was and the fence of the
// holding (fence.go).
func (x *Findings) takeLease(ctx context.Context, companyID int64, sc scans.Scan, owner string) (ScanHead, lease.Fence, error) {
	var head ScanHead
	// The head names its branch from the take on, before the holder writes
	// an issue: a project decision finds the branch there (projectBranches).
	f, err := lease.TakeFenced(ctx, x.t, headKey(companyID, sc.ProjectID, sc.Branch, sc.Tool), owner, &head,
		lease.Attr{Name: headBranchAttr, Value: sc.Branch})
	if errors.Is(err, lease.ErrBusy) {
		return head, f, fmt.Errorf("%w: branch %q of project %d is busy with another upload of %s", ddb.ErrUnavailable, sc.Branch, sc.ProjectID, sc.Tool)
	}
	return head, f, err
}

func (x *Findings) keepLease(ctx context.Context, companyID int64, sc scans.Scan, owner string) (context.Context, func()) {
	return lease.Keep(ctx, x.t, headKey(companyID, sc.ProjectID, sc.Branch, sc.Tool), owner)
}

func (x *Findings) releaseLease(ctx context.Context, companyID int64, sc scans.Scan, owner string, cutOff bool) {
	lease.Release(ctx, x.t, headKey(companyID, sc.ProjectID, sc.Branch, sc.Tool), owner, cutOff)
}

// completeScan moves the head to the scan (when it is the new truth),
// releases the lease and writes the scan's completion (what the scans
// area's CompletionItems built: the scan complete, its events), in one
// transaction, conditional on the scan still holding the lease f (the
// head's own condition: a transaction writes an item once).
func (x *Findings) completeScan(ctx context.Context, companyID int64, sc scans.Scan, f lease.Fence, truth, adopted bool, completion []types.TransactWriteItem) error {
	upd := expression.Remove(expression.Name("lease_owner")).Remove(expression.Name("lease_until")).
		Remove(expression.Name("journal")) // paid in full, or settled
	switch {
	case truth && sc.Category == "":
		upd = upd.Set(expression.Name("scan_id"), expression.Value(sc.ID)).
			Set(expression.Name("scan_created_at"), expression.Value(sc.CreatedAt))
	case truth && adopted: // the category took the uncategorised truth over (categories.go)
		upd = upd.Remove(expression.Name("scan_id")).Remove(expression.Name("scan_created_at"))
	}
	cond := f.Cond()
	head, err := x.t.TxUpdate(f.Key, upd, &cond)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{head}
	if truth && sc.Category != "" {
		cat, err := x.txCategoryHead(companyID, sc)
		if err != nil {
			return err
		}
		items = append(items, cat)
	}
	items = append(items, completion...)
	return lease.Refused(lease.WithFence(ctx, f), x.t.Transact(ctx, items), 0)
}
