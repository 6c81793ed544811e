package tickets

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/lease"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Ticket states on the tracker and how a closed ticket was resolved.
const (
	StateOpen      = "open"
	StateClosed    = "closed"
	ResolutionDone = "done"
	ResolutionWont = "wont_do"
)

// LinkID names the ticket of a rule's group.
func LinkID(ruleID, group string) string { return schema.TicketLinkID(ruleID, group) }

// ClaimLink takes the lease of a group's link for owner until now+lease,
// creating the link (with rule, group and project) when there is none, and
// returns it as stored; ErrLinkBusy while another owner's lease runs.
func (s *Tickets) ClaimLink(ctx context.Context, companyID int64, ruleID, group string, projectID int64, owner string, now time.Time, d time.Duration) (schema.TicketLink, error) {
	id := LinkID(ruleID, group)
	identity := func(upd expression.UpdateBuilder) expression.UpdateBuilder {
		upd = upd.Set(expression.Name("id"), expression.Value(id)).Set(expression.Name("company_id"), expression.Value(companyID)).
			Set(expression.Name("rule_id"), expression.Value(ruleID)).Set(expression.Name("group"), expression.Value(group)).
			Set(expression.Name("ver"), expression.IfNotExists(expression.Name("ver"), expression.Value(0)))
		if projectID != 0 {
			upd = upd.Set(expression.Name("project_id"), expression.Value(projectID))
		}
		return upd
	}
	item, err := lease.Claim(ctx, s.t, schema.TicketLinkKey(companyID, id), owner, now, d, identity, types.ReturnValueAllNew)
	if errors.Is(err, lease.ErrClaimed) {
		return schema.TicketLink{}, ErrLinkBusy
	}
	if err != nil {
		return schema.TicketLink{}, err
	}
	var out schema.TicketLink
	return out, attributevalue.UnmarshalMap(item, &out)
}

// ReleaseLink gives the lease back without recording a ticket.
func (s *Tickets) ReleaseLink(ctx context.Context, companyID int64, id, owner string) error {
	err := lease.Unclaim(ctx, s.t, schema.TicketLinkKey(companyID, id), owner, expression.UpdateBuilder{})
	if errors.Is(err, lease.ErrClaimed) {
		return ErrLinkBusy
	}
	return err
}

// GetLink reads a link.
func (s *Tickets) GetLink(ctx context.Context, companyID int64, id string) (schema.TicketLink, error) {
	var l schema.TicketLink
	return l, s.t.GetItemConsistent(ctx, schema.TicketLinkKey(companyID, id), &l)
}

// LinkByKey finds the link of a tracker's ticket (integration and key).
func (s *Tickets) LinkByKey(ctx context.Context, companyID int64, integration, ticketKey string) (schema.TicketLink, error) {
	var ref schema.TicketKeyRef
	if err := s.t.GetItem(ctx, schema.TicketKeyRefKey(companyID, integration, ticketKey), &ref); err != nil {
		return schema.TicketLink{}, err
	}
	return s.GetLink(ctx, companyID, ref.LinkID)
}

// Links reads every link of a company (the reconciliation's and the
// ticket filters' read: a company's tickets, never its issues).
func (s *Tickets) Links(ctx context.Context, companyID int64) ([]schema.TicketLink, error) {
	out := []schema.TicketLink{}
	kc := expression.Key("PK").Equal(expression.Value(schema.TicketLinkPK(companyID)))
	if err := s.t.QueryAllConsistent(ctx, kc, &out); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(l schema.TicketLink) bool { return l.TicketKey == "" }), nil
}

// Ticket is what a link records of the ticket it found or created.
type Ticket struct {
	System, Integration, Repo, Key, URL, State string
	Number                                     int
}

// RecordLink records the ticket of a link whose lease owner holds, with
// the issues it lists, and gives the lease back: the link, the look-up by
// key, in one transaction; then each issue's set of links. A link that
// already names a ticket keeps it (ErrConflict when it names another).
func (s *Tickets) RecordLink(ctx context.Context, companyID int64, id, owner string, tk Ticket, issueIDs []string) (schema.TicketLink, error) {
	l, err := s.GetLink(ctx, companyID, id)
	if err != nil {
		return schema.TicketLink{}, err
	}
	if l.LeaseOwner != owner {
		return schema.TicketLink{}, ErrLinkBusy
	}
	if l.TicketKey != "" && l.TicketKey != tk.Key {
		return schema.TicketLink{}, ddb.ErrConflict
	}
	ids := mergeIDs(l.IssueIDs, issueIDs)
	at := s.t.Stamp()
	upd := lease.Unclaimed(expression.Set(expression.Name("system"), expression.Value(tk.System)).Set(expression.Name("integration_uuid"), expression.Value(tk.Integration)).
		Set(expression.Name("ticket_key"), expression.Value(tk.Key)).Set(expression.Name("url"), expression.Value(tk.URL)).
		Set(expression.Name("state"), expression.Value(tk.State)).Set(expression.Name("synced"), expression.Value(tk.State)).
		Set(expression.Name("issue_ids"), expression.Value(ids)).Set(expression.Name("updated_at"), expression.Value(at)).
		Set(expression.Name("checked_at"), expression.Value(at)).
		Set(expression.Name("ver"), expression.Value(l.Version+1)).
		Set(expression.Name("created_at"), expression.IfNotExists(expression.Name("created_at"), expression.Value(at))))
	if tk.Repo != "" {
		upd = upd.Set(expression.Name("repo"), expression.Value(tk.Repo)).Set(expression.Name("number"), expression.Value(tk.Number))
	}
	held := lease.HeldBy(owner).And(expression.Name("ver").Equal(expression.Value(l.Version)))
	item, err := s.t.TxUpdate(l.Key, upd, &held)
	if err != nil {
		return schema.TicketLink{}, err
	}
	ref, err := s.t.TxPut(schema.TicketKeyRef{Key: schema.TicketKeyRefKey(companyID, tk.Integration, tk.Key), LinkID: id}, nil)
	if err != nil {
		return schema.TicketLink{}, err
	}
	if err := s.t.Transact(ctx, []types.TransactWriteItem{item, ref}); errors.Is(err, ddb.ErrConflict) {
		return schema.TicketLink{}, ErrLinkBusy
	} else if err != nil {
		return schema.TicketLink{}, err
	}
	if err := s.addMembers(ctx, companyID, id, ids); err != nil {
		return schema.TicketLink{}, err
	}
	return s.GetLink(ctx, companyID, id)
}

// mergeIDs is a with b's ids it lacks, in order, bounded.
func mergeIDs(a, b []string) []string {
	out := slices.Clone(a)
	for _, id := range b {
		if len(out) >= MaxIssuesPerTicket {
			break
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// AddIssues adds issues to a recorded link (a new finding that joins its
// group) and returns the ids that were new.
func (s *Tickets) AddIssues(ctx context.Context, companyID int64, id string, issueIDs []string) ([]string, error) {
	for attempt := 0; ; attempt++ {
		l, err := s.GetLink(ctx, companyID, id)
		if err != nil {
			return nil, err
		}
		ids := mergeIDs(l.IssueIDs, issueIDs)
		fresh := ids[len(l.IssueIDs):]
		if len(fresh) == 0 {
			return nil, nil
		}
		upd := expression.Set(expression.Name("issue_ids"), expression.Value(ids)).Set(expression.Name("ver"), expression.Value(l.Version+1)).
			Set(expression.Name("updated_at"), expression.Value(s.t.Stamp()))
		cond := expression.Name("ver").Equal(expression.Value(l.Version))
		err = s.t.Update(ctx, l.Key, upd, &cond, nil)
		if errors.Is(err, ddb.ErrConflict) && attempt < 5 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return fresh, s.addMembers(ctx, companyID, id, fresh)
	}
}

// addMembers adds link id to each issue's set of links (an ADD to a
// string set: applying it again changes nothing).
func (s *Tickets) addMembers(ctx context.Context, companyID int64, id string, issueIDs []string) error {
	return s.t.Parallel(ctx, len(issueIDs), func(n int) error {
		upd := expression.Add(expression.Name("links"), expression.Value(&types.AttributeValueMemberSS{Value: []string{id}}))
		return s.t.Upsert(ctx, schema.IssueTicketsKey(companyID, issueIDs[n]), upd, nil)
	})
}

// SetState records the ticket's state on the tracker (and how it was
// resolved), conditional on the version read (ErrConflict otherwise);
// synced says the state is one we set there ourselves.
func (s *Tickets) SetState(ctx context.Context, l schema.TicketLink, state, resolution string, synced bool) (schema.TicketLink, error) {
	upd := expression.Set(expression.Name("state"), expression.Value(state)).Set(expression.Name("ver"), expression.Value(l.Version+1)).
		Set(expression.Name("updated_at"), expression.Value(s.t.Stamp())).Set(expression.Name("checked_at"), expression.Value(s.t.Stamp()))
	if resolution == "" {
		upd = upd.Remove(expression.Name("resolution"))
	} else {
		upd = upd.Set(expression.Name("resolution"), expression.Value(resolution))
	}
	if synced {
		upd = upd.Set(expression.Name("synced"), expression.Value(state))
	}
	cond := expression.Name("ver").Equal(expression.Value(l.Version))
	var out schema.TicketLink
	return out, s.t.Update(ctx, l.Key, upd, &cond, &out)
}

// TicketView is a ticket as an issue answer shows it.
type TicketView struct {
	System string `json:"system"`
	Key    string `json:"key"`
	URL    string `json:"url"`
	State  string `json:"state"`
}

// View is a link's ticket as issue answers show it: a ticket closed as
// done whose findings a scan has not yet confirmed fixed reads
// fix_in_progress.
func View(l schema.TicketLink) TicketView {
	state := l.State
	if state == StateClosed && l.Resolution == ResolutionDone && l.Synced != StateClosed {
		state = "fix_in_progress"
	}
	return TicketView{System: l.System, Key: l.TicketKey, URL: l.URL, State: state}
}

// TicketsOfIssues are the tickets of each issue of ids (none: absent),
// two batch reads whatever the number of tickets.
func (s *Tickets) TicketsOfIssues(ctx context.Context, companyID int64, ids []string) (map[string][]TicketView, error) {
	keys := make([]ddb.Key, len(ids))
	for n, id := range ids {
		keys[n] = schema.IssueTicketsKey(companyID, id)
	}
	got, err := s.t.ReadBatch(ctx, keys, true)
	if err != nil {
		return nil, err
	}
	members := map[string][]string{}
	var linkKeys []ddb.Key
	seen := map[string]bool{}
	for _, av := range got {
		var it schema.IssueTickets
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, err
		}
		members[it.SK] = it.Links
		for _, l := range it.Links {
			if !seen[l] {
				seen[l] = true
				linkKeys = append(linkKeys, schema.TicketLinkKey(companyID, l))
			}
		}
	}
	links, err := s.t.ReadBatch(ctx, linkKeys, true)
	if err != nil {
		return nil, err
	}
	views := map[string]TicketView{}
	for _, av := range links {
		var l schema.TicketLink
		if err := attributevalue.UnmarshalMap(av, &l); err != nil {
			return nil, err
		}
		if l.TicketKey != "" {
			views[l.ID] = View(l)
		}
	}
	out := map[string][]TicketView{}
	for issue, ls := range members {
		slices.Sort(ls)
		for _, l := range ls {
			if v, ok := views[l]; ok {
				out[issue] = append(out[issue], v)
			}
		}
	}
	return out, nil
}

// IssuesWithTickets is the set of the company's issues (code findings;
// SCA findings are left out) that a ticket lists, of state ("" any; open, closed), read from the links alone (a
// link holds its state and its issues in one item, so the set is exactly
// what the links say).
func (s *Tickets) IssuesWithTickets(ctx context.Context, companyID int64, state string) (map[string]bool, error) {
	links, err := s.Links(ctx, companyID)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, l := range links {
		if state == "" || l.State == state {
			for _, id := range l.IssueIDs {
				if !strings.HasPrefix(id, SCAPrefix) { // an SCA finding is no issue
					out[id] = true
				}
			}
		}
	}
	return out, nil
}

// RememberEvent records an inbound event's delivery id for ttl;
// ErrReplay when it was recorded before.
func (s *Tickets) RememberEvent(ctx context.Context, companyID int64, integration, deliveryID string, now time.Time, ttl time.Duration) error {
	item := map[string]types.AttributeValue{}
	k := schema.TicketEventKey(companyID, integration, deliveryID)
	for n, v := range k.AV() {
		item[n] = v
	}
	item["expires_at"] = &types.AttributeValueMemberN{Value: itoa(now.Add(ttl).Unix())}
	cond := expression.AttributeNotExists(expression.Name("PK"))
	if err := s.t.PutItem(ctx, item, &cond); errors.Is(err, ddb.ErrConflict) {
		return ErrReplay
	} else if err != nil {
		return err
	}
	return nil
}

// ForgetEvent removes an event's memory (its handling failed and the
// tracker will deliver it again).
func (s *Tickets) ForgetEvent(ctx context.Context, companyID int64, integration, deliveryID string) error {
	return s.t.DeleteItem(ctx, schema.TicketEventKey(companyID, integration, deliveryID))
}

// LinksOfIssue are the ids of the links whose ticket lists an issue.
func (s *Tickets) LinksOfIssue(ctx context.Context, companyID int64, issueID string) ([]string, error) {
	var it schema.IssueTickets
	err := s.t.GetItem(ctx, schema.IssueTicketsKey(companyID, issueID), &it)
	if errors.Is(err, ddb.ErrNotFound) {
		return nil, nil
	}
	slices.Sort(it.Links)
	return it.Links, err
}
