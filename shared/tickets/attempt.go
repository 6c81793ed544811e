package tickets

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/store/ddb"
	storefindings "github.com/acme/codescan-api/shared/store/findings"
	storesca "github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
)

// open opens a group's ticket once, or adds the group's new findings to
// it. Under the link's lease: the link names the ticket (a retry, a later
// scan), else the far side has one with the group's marker (an attempt
// that created it and stopped before its record), else it is created.
func (d *Ticketer) open(ctx context.Context, companyID int64, j job) outbound.Outcome {
	rule, err := d.Tickets.GetRule(ctx, companyID, j.RuleID)
	if errors.Is(err, ddb.ErrNotFound) {
		return outbound.Outcome{Err: "the ticket rule is gone", Gone: true}
	} else if err != nil {
		return storeFailure("reading the rule", err)
	}
	tr, stop := d.tracker(ctx, companyID, rule.Destination.Kind, rule.Destination.Integration, rule.Destination.Repository)
	if stop != nil {
		return *stop
	}
	owner := uuid.NewString()
	link, err := d.Tickets.ClaimLink(ctx, companyID, rule.ID, j.Group, j.ProjectID, owner, d.now(), linkLease)
	if errors.Is(err, storetickets.ErrLinkBusy) {
		return outbound.Outcome{Retryable: true, RetryAfter: 5 * time.Second, Err: "another attempt on this ticket is in progress"}
	} else if err != nil {
		return storeFailure("claiming the ticket", err)
	}
	o := d.openClaimed(ctx, companyID, tr, rule, link, j, owner)
	if !o.Delivered {
		_ = d.Tickets.ReleaseLink(ctx, companyID, link.ID, owner) // the lease's end frees it anyway
	}
	return o
}

func (d *Ticketer) openClaimed(ctx context.Context, companyID int64, tr Tracker, rule schema.TicketRule, link schema.TicketLink, j job, owner string) outbound.Outcome {
	if link.TicketKey != "" {
		return d.extend(ctx, companyID, tr, link, j.IssueIDs, owner)
	}
	tk, found, err := tr.Find(ctx, rule.ID, j.Group)
	if err != nil {
		return tr.Failure("looking for the ticket", err)
	}
	if !found {
		f, err := d.findings(ctx, companyID, j.IssueIDs)
		if err != nil {
			return storeFailure("reading the findings", err)
		}
		title, body := d.describe(rule, f)
		if tk, err = tr.Create(ctx, NewTicket{RuleID: rule.ID, Group: j.Group, Title: title, Body: body, Labels: rule.Labels}); err != nil {
			return tr.Failure("creating the ticket", err)
		}
	}
	if _, err := d.Tickets.RecordLink(ctx, companyID, link.ID, owner, tk, j.IssueIDs); err != nil {
		return storeFailure("recording the ticket", err)
	}
	return outbound.Outcome{Delivered: true}
}

// extend adds findings that joined a ticket's group: a comment listing
// them, then the link. The lease is given back either way.
func (d *Ticketer) extend(ctx context.Context, companyID int64, tr Tracker, link schema.TicketLink, ids []string, owner string) outbound.Outcome {
	var fresh []string
	for _, id := range ids {
		if !slices.Contains(link.IssueIDs, id) {
			fresh = append(fresh, id)
		}
	}
	if len(fresh) > 0 && len(link.IssueIDs) < storetickets.MaxIssuesPerTicket {
		f, err := d.findings(ctx, companyID, fresh)
		if err != nil {
			return storeFailure("reading the findings", err)
		}
		if err := tr.Comment(ctx, link, fmt.Sprintf("%d more finding(s) joined this ticket:\n%s", f.len(), d.list(f))); err != nil {
			return tr.Failure("commenting the new findings", err)
		}
		if _, err := d.Tickets.AddIssues(ctx, companyID, link.ID, fresh); err != nil {
			return storeFailure("recording the new findings", err)
		}
	}
	if err := d.Tickets.ReleaseLink(ctx, companyID, link.ID, owner); err != nil && !errors.Is(err, storetickets.ErrLinkBusy) {
		return storeFailure("releasing the ticket", err)
	}
	return outbound.Outcome{Delivered: true}
}

// tracker is trackerFor as an attempt needs it: the tracker, or the
// outcome that ends the attempt (the destination gone for good, or a
// failure to read it, retried).
func (d *Ticketer) tracker(ctx context.Context, companyID int64, kind, integration, repo string) (Tracker, *outbound.Outcome) {
	tr, gone, err := d.trackerFor(ctx, companyID, kind, integration, repo)
	switch {
	case err != nil:
		o := storeFailure("opening the destination", err)
		return nil, &o
	case gone != "":
		return nil, &outbound.Outcome{Err: gone, Gone: true}
	}
	return tr, nil
}

// jobLink reads the link of a job on an existing ticket, or the outcome
// that ends the attempt.
func (d *Ticketer) jobLink(ctx context.Context, companyID int64, j job) (schema.TicketLink, *outbound.Outcome) {
	l, err := d.Tickets.GetLink(ctx, companyID, j.LinkID)
	if errors.Is(err, ddb.ErrNotFound) {
		return l, &outbound.Outcome{Err: "the ticket's link is gone", Gone: true}
	} else if err != nil {
		o := storeFailure("reading the ticket", err)
		return l, &o
	}
	return l, nil
}

// found are a ticket's findings as read: code findings and SCA findings.
type found struct {
	code []storefindings.Issue
	sca  []storesca.Issue
}

func (f found) len() int { return len(f.code) + len(f.sca) }

// findings reads a ticket's findings by id (SCA ones marked SCAPrefix),
// those gone left out.
func (d *Ticketer) findings(ctx context.Context, companyID int64, ids []string) (found, error) {
	var f found
	for _, id := range ids {
		if sid, ok := strings.CutPrefix(id, SCAPrefix); ok {
			i, err := d.Store.SCA.GetSCAIssue(ctx, companyID, sid)
			if errors.Is(err, ddb.ErrNotFound) {
				continue
			} else if err != nil {
				return f, err
			}
			f.sca = append(f.sca, i)
			continue
		}
		i, err := d.Store.Lists.GetIssue(ctx, companyID, id)
		if errors.Is(err, ddb.ErrNotFound) {
			continue
		} else if err != nil {
			return f, err
		}
		f.code = append(f.code, i)
	}
	return f, nil
}

// maxTitle bounds a ticket's title (Jira's summary holds 255).
const maxTitle = 200

// describe is a new ticket's title and text.
func (d *Ticketer) describe(rule schema.TicketRule, f found) (string, string) {
	if len(f.code) == 0 && len(f.sca) > 0 {
		return d.describeSCA(rule, f)
	}
	issues := f.code
	project := ""
	if len(issues) > 0 {
		project = issues[0].ProjectName
	}
	var title string
	switch {
	case len(issues) == 0:
		title = "Codescan findings"
	case rule.Grouping == GroupCWE:
		title = fmt.Sprintf("CWE-%d: %d finding(s) in %s", issues[0].CWE, len(issues), project)
	case rule.Grouping == GroupRule:
		title = fmt.Sprintf("%s %s: %d finding(s) in %s", issues[0].Tool, issues[0].RuleID, len(issues), project)
	default:
		title = fmt.Sprintf("%s in %s", issues[0].Title, project)
	}
	title = clip(cleantext.Visible(title), maxTitle)
	body := fmt.Sprintf("Codescan found %d finding(s) that the ticket rule %s sends here:\n%s", f.len(), rule.ID, d.list(f))
	return title, body
}

// describeSCA is the title and text of a ticket of SCA findings: per
// package, the "upgrade X" ticket listing each advisory, version and fix.
func (d *Ticketer) describeSCA(rule schema.TicketRule, f found) (string, string) {
	i := f.sca[0]
	pkg := i.Package.Name
	var title string
	switch rule.Grouping {
	case GroupPackage:
		title = fmt.Sprintf("Upgrade %s (%s): %d vulnerable dependency finding(s)", pkg, i.Package.Ecosystem, len(f.sca))
		if fix := fixVersion(f.sca); fix != "" {
			title = fmt.Sprintf("Upgrade %s (%s) to %s: %d vulnerable dependency finding(s)", pkg, i.Package.Ecosystem, fix, len(f.sca))
		}
	case GroupRule:
		title = fmt.Sprintf("%s: %d vulnerable dependency finding(s)", advisory(i), len(f.sca))
	default:
		title = fmt.Sprintf("%s in %s@%s", advisory(i), pkg, i.Package.Version)
	}
	title = clip(cleantext.Visible(title), maxTitle)
	body := fmt.Sprintf("Codescan found %d vulnerable dependency finding(s) that the ticket rule %s sends here:\n%s", f.len(), rule.ID, d.list(f))
	return title, body
}

// fixVersion is the fix version every finding names when they name one
// and the same ("" otherwise: the list says each).
func fixVersion(is []storesca.Issue) string {
	fix := is[0].Package.FixVersion
	for _, i := range is[1:] {
		if i.Package.FixVersion != fix {
			return ""
		}
	}
	return fix
}

// list is one line per finding (at most maxListed), made safe to show.
func (d *Ticketer) list(f found) string {
	var b strings.Builder
	n := 0
	more := func() bool {
		if n == maxListed {
			fmt.Fprintf(&b, "- and %d more\n", f.len()-maxListed)
			return false
		}
		n++
		return true
	}
	base := strings.TrimRight(d.AppURL, "/")
	for _, i := range f.code {
		if !more() {
			return b.String()
		}
		line := fmt.Sprintf("- [%s] %s — %s:%d (finding %s)", i.Urgency, clip(i.Title, 200), clip(i.FilePath, 300), i.Line, i.ID)
		if d.AppURL != "" {
			line += " " + base + "/issues/" + i.ID
		}
		b.WriteString(cleantext.Visible(line) + "\n")
	}
	for _, i := range f.sca {
		if !more() {
			return b.String()
		}
		fix := i.Package.FixVersion
		if fix == "" {
			fix = "none known"
		}
		line := fmt.Sprintf("- [%s] %s@%s (%s) — %s — severity %s, fix version %s — %s (SCA finding %s)", storesca.Urgency(i.Severity),
			clip(i.Package.Name, 200), clip(i.Package.Version, 100), clip(i.Package.Ecosystem, 50), clip(strings.Join(advisories(i), ", "), 300),
			clip(i.Severity, 20), clip(fix, 100), clip(i.Location.Path, 300), i.ID)
		if d.AppURL != "" {
			line += " " + base + "/issues/sca/" + i.ID
		}
		b.WriteString(cleantext.Visible(line) + "\n")
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return norm.ClipTo(s, n-len("…")) + "…"
}

// sync closes or reopens a ticket after a scan, with a comment saying why.
func (d *Ticketer) sync(ctx context.Context, companyID int64, j job) outbound.Outcome {
	l, stop := d.jobLink(ctx, companyID, j)
	if stop != nil {
		return *stop
	}
	action, err := d.syncAction(ctx, companyID, l)
	if err != nil {
		return storeFailure("reading the findings", err)
	}
	if action != j.Action { // a later change decided otherwise
		return outbound.Outcome{Delivered: true}
	}
	tr, stop := d.tracker(ctx, companyID, l.System, l.Integration, l.Repo)
	if stop != nil {
		return *stop
	}
	state, text, move := storetickets.StateClosed, fmt.Sprintf("Scan %s found every finding of this ticket fixed.", j.ScanID), tr.Close
	resolution := storetickets.ResolutionDone
	if action == actionReopen {
		state, text, move, resolution = storetickets.StateOpen, fmt.Sprintf("Scan %s found a finding of this ticket again.", j.ScanID), tr.Reopen, ""
	}
	if err := tr.Comment(ctx, l, text); err != nil {
		return tr.Failure("commenting the scan's result", err)
	}
	if l.State != state {
		if err := move(ctx, l); err != nil {
			return tr.Failure("moving the ticket", err)
		}
	}
	if _, err := d.Tickets.SetState(ctx, l, state, resolution, true); err != nil {
		return storeFailure("recording the ticket's state", err)
	}
	return outbound.Outcome{Delivered: true}
}

// comment shows a person's triage of a finding on a ticket.
func (d *Ticketer) comment(ctx context.Context, companyID int64, j job) outbound.Outcome {
	l, stop := d.jobLink(ctx, companyID, j)
	if stop != nil {
		return *stop
	}
	i, err := d.Store.Lists.GetIssue(ctx, companyID, j.IssueID)
	if errors.Is(err, ddb.ErrNotFound) {
		return outbound.Outcome{Err: "the finding is gone", Gone: true}
	} else if err != nil {
		return storeFailure("reading the finding", err)
	}
	tr, stop := d.tracker(ctx, companyID, l.System, l.Integration, l.Repo)
	if stop != nil {
		return *stop
	}
	text := fmt.Sprintf("Finding %s (%s) was triaged as %s.", i.ID, clip(i.Title, 200), i.Status)
	if i.Reason != "" {
		text += " Reason: " + clip(i.Reason, 500)
	}
	if err := tr.Comment(ctx, l, cleantext.VisibleLines(text)); err != nil {
		return tr.Failure("commenting the triage", err)
	}
	return outbound.Outcome{Delivered: true}
}
