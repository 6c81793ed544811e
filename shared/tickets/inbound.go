package tickets

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	"github.com/acme/codescan-api/shared/store/triage"
)

// Change is a tracker's report of a ticket's state: a verified inbound
// event, or what the reconciliation read.
type Change struct {
	CompanyID   int64
	Integration string // the link's integration uuid
	TicketKey   string // owner/repo#12, ABC-12
	Remote      Remote
	// Source names where the change came from in the findings' history:
	// "Jira ABC-12", "GitHub issue o/r#12".
	Source string
}

// Results of Apply.
const (
	Applied   = "applied"
	Unchanged = "unchanged" // the link already says so (our own echo, a redelivery)
	Unknown   = "unknown"   // no ticket of ours
)

// SourceOf names a link's ticket for the history.
func SourceOf(l schema.TicketLink) string {
	if l.System == SystemJira {
		return "Jira " + l.TicketKey
	}
	return "GitHub issue " + l.TicketKey
}

// Apply takes a ticket's new state to its findings, through the one issue
// write path (SCA findings: through theirs, SetSCAStatuses): closed as
// won't do accepts the risk of its open findings
// (the ticket as reason, the company's default end); closed as done
// leaves them as they are until a scan confirms the fix (the ticket reads
// fix_in_progress); reopened reopens the findings the ticket accepted. A
// state the link already holds changes nothing: our own changes come back
// as such echoes.
func (d *Ticketer) Apply(ctx context.Context, ch Change) (string, error) {
	l, err := d.Tickets.LinkByKey(ctx, ch.CompanyID, ch.Integration, ch.TicketKey)
	if errors.Is(err, ddb.ErrNotFound) {
		return Unknown, nil
	} else if err != nil {
		return "", err
	}
	if ch.Remote.State == l.State && ch.Remote.Resolution == l.Resolution {
		return Unchanged, nil
	}
	if ch.Remote.State == storetickets.StateClosed && ch.Remote.Resolution == storetickets.ResolutionDone &&
		l.State == storetickets.StateClosed && l.Synced == storetickets.StateClosed {
		return Unchanged, nil // we closed it as fixed
	}
	if ch.Source == "" {
		ch.Source = SourceOf(l)
	}
	switch {
	case ch.Remote.State == storetickets.StateClosed && ch.Remote.Resolution == storetickets.ResolutionWont:
		reason := fmt.Sprintf("Won't fix: the ticket was closed as won't do (from %s)", ch.Source)
		err = d.triageAll(ctx, ch, l, "accepted_risk", reason, Open)
		if err == nil {
			err = d.triageSCA(ctx, ch, l, "accepted_risk", reason, func(i sca.Issue) bool { return Open(i.Status) })
		}
	case ch.Remote.State == storetickets.StateOpen && l.Resolution == storetickets.ResolutionWont:
		reason := fmt.Sprintf("The ticket was reopened (from %s)", ch.Source)
		err = d.triageAll(ctx, ch, l, "open", reason, func(s string) bool { return s == "accepted_risk" })
		if err == nil {
			// Only the SCA findings this ticket accepted (its reason
			// names it): a VEX statement's acceptance stays.
			err = d.triageSCA(ctx, ch, l, "open", reason, func(i sca.Issue) bool {
				return i.Status == "accepted_risk" && strings.Contains(i.Reason, " "+SourceOf(l)+")")
			})
		}
	}
	if err != nil {
		return "", err
	}
	if _, err := d.Tickets.SetState(ctx, l, ch.Remote.State, ch.Remote.Resolution, false); err != nil {
		return "", err
	}
	return Applied, nil
}

// triageAll gives every finding of the ticket whose status pick takes the
// status, as a decision for the finding's project (scope project), with
// no person behind it: the reason names the ticket.
func (d *Ticketer) triageAll(ctx context.Context, ch Change, l schema.TicketLink, status, reason string, pick func(string) bool) error {
	for _, id := range l.IssueIDs {
		if strings.HasPrefix(id, SCAPrefix) {
			continue // triageSCA
		}
		i, err := d.Store.Lists.GetIssue(ctx, ch.CompanyID, id)
		if errors.Is(err, ddb.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if !pick(i.Status) {
			continue
		}
		upd := triage.IssueUpdate{Status: &status, Reason: &reason}
		if _, err := d.Store.Triage.DecideIssue(ctx, ch.CompanyID, id, upd, schema.DecisionProject, findings.Actor{}); err != nil {
			return fmt.Errorf("finding %s: %w", id, err)
		}
	}
	return nil
}

// triageSCA gives the ticket's SCA findings whose state pick takes the
// status and reason through the SCA findings' status write path (as a VEX
// import does: each finding decided again as it is read, one audit entry
// with the first write counting the findings planned). SCA findings keep
// no history: the reason names the ticket.
func (d *Ticketer) triageSCA(ctx context.Context, ch Change, l schema.TicketLink, status, reason string, pick func(sca.Issue) bool) error {
	var planned []string
	for _, id := range l.IssueIDs {
		sid, ok := strings.CutPrefix(id, SCAPrefix)
		if !ok {
			continue
		}
		i, err := d.Store.SCA.GetSCAIssue(ctx, ch.CompanyID, sid)
		if errors.Is(err, ddb.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if pick(i) && (i.Status != status || i.Reason != reason) {
			planned = append(planned, sid)
		}
	}
	if len(planned) == 0 {
		return nil
	}
	decide := func(i sca.Issue) (string, string, bool) { return status, reason, pick(i) }
	audit := ledger.AuditEntry{Action: "ticket.sca_status", TargetType: "ticket", TargetID: l.TicketKey,
		Changes: map[string]ledger.Change{"status": {After: status}, "source": {After: ch.Source}, "sca_findings_changed": {After: len(planned)}}}
	if _, err := d.Store.SCA.SetSCAStatuses(ctx, ch.CompanyID, planned, decide, audit); err != nil {
		return fmt.Errorf("SCA findings: %w", err)
	}
	return nil
}
