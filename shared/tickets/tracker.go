package tickets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/google/go-github/v72/github"

	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
)

// Systems a ticket lives on.
const (
	SystemGitHub = "github"
	SystemJira   = "jira"
)

// Marker is the hidden marker a rule's group's ticket carries: a retry
// that lost its record of the ticket finds it again by it.
func Marker(ruleID, group string) string {
	return fmt.Sprintf("<!-- codescan:ticket rule=%s group=%s -->", ruleID, group)
}

// ReplyMarker starts every comment we write on a ticket: an event about
// it is our own echo.
const ReplyMarker = "<!-- codescan:reply -->"

// MarkerLabel is the Jira label that marks a rule's group's ticket (Jira
// labels hold no spaces; JQL finds them exactly).
func MarkerLabel(ruleID, group string) string {
	sum := sha256.Sum256([]byte(ruleID + "\x00" + group))
	return "codescan-" + hex.EncodeToString(sum[:10])
}

// NewTicket is what a ticket is created with.
type NewTicket struct {
	RuleID, Group string
	Title, Body   string
	Labels        []string
}

// Remote is a ticket's state on the tracker.
type Remote struct {
	State      string // storetickets.StateOpen, StateClosed
	Resolution string // storetickets.ResolutionDone, ResolutionWont, ""
}

// Tracker is one destination's tracker, as one attempt uses it.
type Tracker interface {
	// Find looks for the ticket of a rule's group by its marker.
	Find(ctx context.Context, ruleID, group string) (storetickets.Ticket, bool, error)
	Create(ctx context.Context, t NewTicket) (storetickets.Ticket, error)
	Comment(ctx context.Context, l schema.TicketLink, text string) error
	// Close closes a ticket as done, Reopen opens it again.
	Close(ctx context.Context, l schema.TicketLink) error
	Reopen(ctx context.Context, l schema.TicketLink) error
	Get(ctx context.Context, l schema.TicketLink) (Remote, error)
	// Failure classifies a failed call.
	Failure(doing string, err error) outbound.Outcome
}

// gitHubTracker opens issues in one repository through go-github.
type gitHubTracker struct {
	gh          *github.Client
	owner, repo string
	integration string
}

func (g gitHubTracker) full() string { return g.owner + "/" + g.repo }

func (g gitHubTracker) ticket(i *github.Issue) storetickets.Ticket {
	return storetickets.Ticket{System: SystemGitHub, Integration: g.integration, Repo: g.full(), Number: i.GetNumber(),
		Key: fmt.Sprintf("%s#%d", g.full(), i.GetNumber()), URL: i.GetHTMLURL(), State: i.GetState()}
}

func (g gitHubTracker) Find(ctx context.Context, ruleID, group string) (storetickets.Ticket, bool, error) {
	q := fmt.Sprintf(`%q in:body repo:%s is:issue`, Marker(ruleID, group), g.full())
	res, _, err := g.gh.Search.Issues(ctx, q, &github.SearchOptions{ListOptions: github.ListOptions{PerPage: 10}})
	if err != nil {
		return storetickets.Ticket{}, false, err
	}
	for _, i := range res.Issues {
		if strings.Contains(i.GetBody(), Marker(ruleID, group)) {
			return g.ticket(i), true, nil
		}
	}
	return storetickets.Ticket{}, false, nil
}

// gitHubEscapes make report text inert in GitHub Markdown: no mention
// (an @ is followed by an empty HTML comment, which renders as nothing
// and notifies no one), no HTML (so no text can pass for our markers),
// no link (a bracket cannot open one).
var gitHubEscapes = strings.NewReplacer("@", "@<!-- -->", "<", "&lt;", ">", "&gt;", "[", "\\[")

// gitHubText is a ticket's or comment's text (made visible already) as a
// GitHub issue body shows it, safe.
func gitHubText(s string) string { return gitHubEscapes.Replace(s) }

func (g gitHubTracker) Create(ctx context.Context, t NewTicket) (storetickets.Ticket, error) {
	body := Marker(t.RuleID, t.Group) + "\n" + gitHubText(t.Body)
	labels := t.Labels
	if labels == nil {
		labels = []string{}
	}
	i, _, err := g.gh.Issues.Create(ctx, g.owner, g.repo, &github.IssueRequest{Title: &t.Title, Body: &body, Labels: &labels})
	if err != nil {
		return storetickets.Ticket{}, err
	}
	return g.ticket(i), nil
}

func (g gitHubTracker) Comment(ctx context.Context, l schema.TicketLink, text string) error {
	body := ReplyMarker + "\n" + gitHubText(text)
	_, _, err := g.gh.Issues.CreateComment(ctx, g.owner, g.repo, l.Number, &github.IssueComment{Body: &body})
	return err
}

func (g gitHubTracker) Close(ctx context.Context, l schema.TicketLink) error {
	_, _, err := g.gh.Issues.Edit(ctx, g.owner, g.repo, l.Number, &github.IssueRequest{State: github.Ptr("closed"), StateReason: github.Ptr("completed")})
	return err
}

func (g gitHubTracker) Reopen(ctx context.Context, l schema.TicketLink) error {
	_, _, err := g.gh.Issues.Edit(ctx, g.owner, g.repo, l.Number, &github.IssueRequest{State: github.Ptr("open")})
	return err
}

func (g gitHubTracker) Get(ctx context.Context, l schema.TicketLink) (Remote, error) {
	i, _, err := g.gh.Issues.Get(ctx, g.owner, g.repo, l.Number)
	if err != nil {
		return Remote{}, err
	}
	return GitHubRemote(i.GetState(), i.GetStateReason()), nil
}

// GitHubRemote is a GitHub issue's state and reason as a ticket's.
func GitHubRemote(state, reason string) Remote {
	if state != "closed" {
		return Remote{State: storetickets.StateOpen}
	}
	if reason == "not_planned" {
		return Remote{State: storetickets.StateClosed, Resolution: storetickets.ResolutionWont}
	}
	return Remote{State: storetickets.StateClosed, Resolution: storetickets.ResolutionDone}
}

func (g gitHubTracker) Failure(doing string, err error) outbound.Outcome {
	return scmhost.Failure(doing, err)
}

// jiraTracker opens issues in one Jira integration's project.
type jiraTracker struct {
	c           *JiraClient
	in          schema.JiraIntegration
	integration string
}

func (j jiraTracker) ticket(key, state string) storetickets.Ticket {
	return storetickets.Ticket{System: SystemJira, Integration: j.integration, Key: key, URL: j.c.Site + "/browse/" + key, State: state}
}

func (j jiraTracker) Find(ctx context.Context, ruleID, group string) (storetickets.Ticket, bool, error) {
	label := MarkerLabel(ruleID, group)
	found, err := j.c.Search(ctx, fmt.Sprintf(`project = %q AND labels = %q`, j.in.ProjectKey, label), 5)
	if err != nil {
		return storetickets.Ticket{}, false, err
	}
	for _, i := range found {
		r := JiraRemote(i, j.in)
		return j.ticket(i.Key, r.State), true, nil
	}
	return storetickets.Ticket{}, false, nil
}

func (j jiraTracker) Create(ctx context.Context, t NewTicket) (storetickets.Ticket, error) {
	var in JiraNewIssue
	in.Fields.Project = jiraRef{Key: j.in.ProjectKey}
	in.Fields.IssueType = jiraRef{Name: j.in.IssueType}
	in.Fields.Summary = t.Title
	in.Fields.Description = Document(t.Body)
	in.Fields.Labels = append([]string{MarkerLabel(t.RuleID, t.Group)}, t.Labels...)
	out, err := j.c.CreateIssue(ctx, in)
	if err != nil {
		return storetickets.Ticket{}, err
	}
	return j.ticket(out.Key, storetickets.StateOpen), nil
}

func (j jiraTracker) Comment(ctx context.Context, l schema.TicketLink, text string) error {
	return j.c.Comment(ctx, l.TicketKey, text)
}

// move takes the issue's transition named name, else the first whose
// target's status category is category.
func (j jiraTracker) move(ctx context.Context, key, name, category string) error {
	ts, err := j.c.Transitions(ctx, key)
	if err != nil {
		return err
	}
	pick := ""
	for _, t := range ts {
		if name != "" && strings.EqualFold(t.Name, name) {
			pick = t.ID
			break
		}
		if pick == "" && name == "" && t.To.StatusCategory.Key == category {
			pick = t.ID
		}
	}
	if pick == "" {
		return &JiraError{Status: 409, Messages: []string{"no transition to " + category}}
	}
	return j.c.Transition(ctx, key, pick)
}

func (j jiraTracker) Close(ctx context.Context, l schema.TicketLink) error {
	return j.move(ctx, l.TicketKey, j.in.DoneTransition, "done")
}

func (j jiraTracker) Reopen(ctx context.Context, l schema.TicketLink) error {
	return j.move(ctx, l.TicketKey, j.in.ReopenTransition, "new")
}

func (j jiraTracker) Get(ctx context.Context, l schema.TicketLink) (Remote, error) {
	i, err := j.c.GetIssue(ctx, l.TicketKey)
	if err != nil {
		return Remote{}, err
	}
	return JiraRemote(i, j.in), nil
}

// JiraRemote is a Jira issue's state as a ticket's: done when its status
// category is done; won't do when its resolution is the integration's
// won't-do name (or "Won't Do", "Won't Fix" when none is set).
func JiraRemote(i JiraIssue, in schema.JiraIntegration) Remote {
	if i.Fields.Status.StatusCategory.Key != "done" {
		return Remote{State: storetickets.StateOpen}
	}
	res := ""
	if i.Fields.Resolution != nil {
		res = i.Fields.Resolution.Name
	}
	wont := []string{"Won't Do", "Won't Fix"}
	if in.WontDoTransition != "" {
		wont = []string{in.WontDoTransition}
	}
	for _, w := range wont {
		if strings.EqualFold(res, w) {
			return Remote{State: storetickets.StateClosed, Resolution: storetickets.ResolutionWont}
		}
	}
	return Remote{State: storetickets.StateClosed, Resolution: storetickets.ResolutionDone}
}

func (j jiraTracker) Failure(doing string, err error) outbound.Outcome {
	return jiraFailure(doing, err)
}
