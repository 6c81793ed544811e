package tickets

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
)

// errEnough stops reading a scan's issues past MaxScanIssues.
var errEnough = errors.New("enough issues")

// Jobs are the deliveries an event asks: for a completed scan, one per
// (rule, group) of its open findings that a rule matches, and one per
// ticket of its project a scan's result closes or reopens; for a triage
// by a person of a finding that has tickets, a comment on each.
func (d *Ticketer) Jobs(ctx context.Context, ev schema.Event) ([]outbound.Job, error) {
	switch ev.Type {
	case notify.TypeScanCompleted:
		return d.scanJobs(ctx, ev)
	case "issue_status_changed":
		return d.triageJobs(ctx, ev)
	}
	return nil, nil
}

func (d *Ticketer) scanJobs(ctx context.Context, ev schema.Event) ([]outbound.Job, error) {
	var data struct {
		ScanID string `json:"scan_id"`
	}
	if json.Unmarshal(ev.Data, &data) != nil || data.ScanID == "" {
		return nil, nil
	}
	sc, err := d.Store.Scans.GetScan(ctx, ev.CompanyID, data.ScanID)
	if errors.Is(err, ddb.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	open, err := d.openJobs(ctx, ev.CompanyID, sc)
	if err != nil {
		return nil, err
	}
	sync, err := d.syncJobs(ctx, ev.CompanyID, sc)
	return append(open, sync...), err
}

// group is one ticket's worth of a scan's findings.
type group struct {
	rule schema.TicketRule
	key  string
	ids  []string
}

// openJobs groups the scan's open issues by the rules that match them.
func (d *Ticketer) openJobs(ctx context.Context, companyID int64, sc scans.Scan) ([]outbound.Job, error) {
	rules, err := d.Tickets.ListRules(ctx, companyID)
	if err != nil {
		return nil, err
	}
	rules = slices.DeleteFunc(rules, func(r schema.TicketRule) bool { return r.ProjectID != 0 && r.ProjectID != sc.ProjectID })
	if len(rules) == 0 {
		return nil, nil
	}
	p, err := d.Store.Catalog.GetProject(ctx, companyID, sc.ProjectID)
	if err != nil && !errors.Is(err, ddb.ErrNotFound) {
		return nil, err
	}
	groups := map[string]*group{}
	var order []string
	add := func(r schema.TicketRule, key, id string) {
		lid := storetickets.LinkID(r.ID, key)
		g, ok := groups[lid]
		if !ok {
			g = &group{rule: r, key: key}
			groups[lid] = g
			order = append(order, lid)
		}
		if len(g.ids) < storetickets.MaxIssuesPerTicket {
			g.ids = append(g.ids, id)
		}
	}
	n := 0
	err = nil
	codeRule := func(r schema.TicketRule) bool { return !SCARule(r) }
	if slices.ContainsFunc(rules, codeRule) {
		err = d.Store.Lists.EachScanIssue(ctx, companyID, sc.ID, func(i findings.Issue) error {
			if n++; n > MaxScanIssues {
				return errEnough
			}
			if !Open(i.Status) {
				return nil
			}
			for _, r := range rules {
				if Matches(r, i, sc.ID, p.DefaultBranch) {
					add(r, GroupKey(r.Grouping, i), i.ID)
				}
			}
			return nil
		})
	}
	if err != nil && !errors.Is(err, errEnough) {
		return nil, err
	}
	if slices.ContainsFunc(rules, SCARule) {
		err := d.eachScanSCA(ctx, companyID, sc.ID, func(i sca.Issue) {
			if !Open(i.Status) || !Reported(i) {
				return
			}
			for _, r := range rules {
				if MatchesSCA(r, i, sc.ID, p.DefaultBranch) {
					add(r, SCAGroupKey(r.Grouping, i), scaID(i.ID))
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	jobs := make([]outbound.Job, 0, len(order))
	for _, id := range order {
		g := groups[id]
		b, err := json.Marshal(job{Kind: kindOpen, RuleID: g.rule.ID, Group: g.key, ProjectID: sc.ProjectID, ScanID: sc.ID, IssueIDs: g.ids})
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, outbound.Job{Key: "ticket-" + sc.ID + "-" + id, Recipient: g.rule.Destination.Integration, Payload: b})
	}
	return jobs, nil
}

// eachScanSCA calls fn with the scan's SCA findings (its list, by id), at
// most MaxScanSCAIssues.
func (d *Ticketer) eachScanSCA(ctx context.Context, companyID int64, scanID string, fn func(sca.Issue)) error {
	q := page.Request{Limit: 1000}
	for n := 0; n < MaxScanSCAIssues; {
		foundPage, err := d.Store.SCA.ListScanSCAIssues(ctx, companyID, scanID, q)
		found, res := foundPage.Items, foundPage
		if err != nil {
			return err
		}
		for _, i := range found {
			if n++; n > MaxScanSCAIssues {
				return nil
			}
			fn(i)
		}
		if res.Next == "" {
			return nil
		}
		q.Token = res.Next
	}
	return nil
}

// maxSyncReads bounds the findings one scan's sync reads.
const maxSyncReads = 20_000

// Sync actions.
const (
	actionClose  = "close"
	actionReopen = "reopen"
)

// syncJobs are the closes and reopens the scan's result asks of its
// project's tickets: every finding of a ticket fixed (none open, at least
// one fixed) closes it; a finding open again on a ticket we closed
// reopens it.
func (d *Ticketer) syncJobs(ctx context.Context, companyID int64, sc scans.Scan) ([]outbound.Job, error) {
	links, err := d.Tickets.Links(ctx, companyID)
	if err != nil {
		return nil, err
	}
	var jobs []outbound.Job
	reads := 0
	for _, l := range links {
		if l.ProjectID != sc.ProjectID {
			continue
		}
		// Bounded: past maxSyncReads findings read, the other tickets
		// wait for the project's next scan.
		if reads += len(l.IssueIDs); reads > maxSyncReads {
			break
		}
		action, err := d.syncAction(ctx, companyID, l)
		if err != nil || action == "" {
			if err != nil {
				return nil, err
			}
			continue
		}
		b, err := json.Marshal(job{Kind: kindSync, LinkID: l.ID, ScanID: sc.ID, Action: action})
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, outbound.Job{Key: "ticket-sync-" + sc.ID + "-" + l.ID, Recipient: l.Integration, Payload: b})
	}
	return jobs, nil
}

// syncAction is what a ticket's findings ask of it now: close, reopen or
// nothing.
func (d *Ticketer) syncAction(ctx context.Context, companyID int64, l schema.TicketLink) (string, error) {
	open, fixed := 0, 0
	for _, id := range l.IssueIDs {
		if sid, ok := strings.CutPrefix(id, SCAPrefix); ok {
			// An SCA finding has no fixed status: it is gone when no
			// source of its branch reports it any more.
			i, err := d.Store.SCA.GetSCAIssue(ctx, companyID, sid)
			if errors.Is(err, ddb.ErrNotFound) {
				continue
			} else if err != nil {
				return "", err
			}
			switch {
			case !Reported(i):
				fixed++
			case Open(i.Status):
				open++
			}
			continue
		}
		i, err := d.Store.Lists.GetIssue(ctx, companyID, id)
		if errors.Is(err, ddb.ErrNotFound) {
			continue
		} else if err != nil {
			return "", err
		}
		switch {
		case Open(i.Status):
			open++
		case i.Status == "fixed":
			fixed++
		}
	}
	switch {
	case open == 0 && fixed > 0 && l.Synced != storetickets.StateClosed:
		return actionClose, nil
	case open > 0 && l.Synced == storetickets.StateClosed:
		return actionReopen, nil
	}
	return "", nil
}

// triageJobs comment a person's triage of a finding on each of its
// tickets. A change with no person behind it (a scan, a ticket's own
// event) is not commented: scans close and reopen tickets themselves, and
// a ticket's event is the tracker's own news.
func (d *Ticketer) triageJobs(ctx context.Context, ev schema.Event) ([]outbound.Job, error) {
	var data struct {
		IssueID   string `json:"issue_id"`
		ChangedBy *int64 `json:"changed_by"`
	}
	if json.Unmarshal(ev.Data, &data) != nil || data.IssueID == "" || data.ChangedBy == nil {
		return nil, nil
	}
	ids, err := d.Tickets.LinksOfIssue(ctx, ev.CompanyID, data.IssueID)
	if err != nil {
		return nil, err
	}
	var jobs []outbound.Job
	for _, id := range ids {
		l, err := d.Tickets.GetLink(ctx, ev.CompanyID, id)
		if err != nil && !errors.Is(err, ddb.ErrNotFound) {
			return nil, err // a failed read is retried, never taken for a link without a ticket
		}
		if err != nil || l.TicketKey == "" {
			continue
		}
		b, err := json.Marshal(job{Kind: kindComment, LinkID: id, IssueID: data.IssueID})
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, outbound.Job{Key: "ticket-" + ev.ID + "-" + id, Recipient: l.Integration, Payload: b})
	}
	return jobs, nil
}
