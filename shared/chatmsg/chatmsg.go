// Package chatmsg renders a notification event as a chat message people
// want to read: what happened (one line), its counts, the most urgent
// findings (urgency, title, file:line or package) and a link into the web
// application. Slack gets a Block Kit message (built with the maintained
// client github.com/slack-go/slack), Microsoft Teams an Adaptive Card 1.5
// in the message envelope Teams Workflows webhooks take. Every text a
// report or a tenant wrote is made visible (shared/cleantext) and then safe
// for where it lands: escaped for Slack mrkdwn, and in Teams only in
// TextRuns, which render no Markdown.
package chatmsg

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/notify"
)

// Kinds a message is rendered for.
const (
	KindSlack = "slack"
	KindTeams = "teams"
)

// TopFindings is how many findings a message lists.
const TopFindings = 5

// Bounds of the texts a message shows, in characters.
const (
	maxSummary = 150 // Slack's header block text limit
	maxTitle   = 200
	maxPath    = 200
	maxContext = 2000
)

// Finding is one finding a message lists.
type Finding struct {
	Urgency string // CR, HI, ME, LO, IN
	Title   string
	Path    string
	Line    int
	Package string
}

// Fact is one count of a message.
type Fact struct {
	Name  string
	Value int64
}

// Message is what a chat message says, before it is rendered for a kind.
type Message struct {
	Summary  string // what happened, one line
	Context  string // where: project and branch, tool (may be "")
	Facts    []Fact
	Findings []Finding // at most TopFindings
	More     int       // findings not listed
	Link     string    // into the web application
	Footer   string    // the event's type, id and time
}

// Input is an event to render: its payload (notify.Payload) and, when the
// caller read them, the event's findings, most urgent first (any number;
// the first TopFindings are listed). Without them, a new-issue event's own
// list is used.
type Input struct {
	AppURL   string
	Payload  []byte
	Findings []Finding
}

// eventData is what messages read of an event's data.
type eventData struct {
	ScanID          string    `json:"scan_id"`
	IssueID         string    `json:"issue_id"`
	IntegrationUUID string    `json:"integration_uuid"`
	WebhookID       string    `json:"webhook_id"`
	ProjectName     string    `json:"project_name"`
	Branch          string    `json:"branch"`
	Tool            string    `json:"tool"`
	Findings        *int64    `json:"findings"`
	Count           *int64    `json:"count"`
	FailedReason    string    `json:"failed_reason"`
	Title           string    `json:"title"`
	Status          string    `json:"status"`
	PreviousStatus  string    `json:"previous_status"`
	Urgency         string    `json:"urgency"`
	DueDate         string    `json:"due_date"`
	WeekStart       string    `json:"week_start"`
	WeekEnd         string    `json:"week_end"`
	OpenIssues      *int64    `json:"open_issues"`
	Overdue         *int64    `json:"overdue"`
	DueSoon         *int64    `json:"due_soon"`
	Name            string    `json:"name"`
	Reason          string    `json:"reason"`
	Issues          []listed  `json:"issues"`
	Rules           []ruleRef `json:"rules"`
	AdvisoryID      string    `json:"advisory_id"`
	Package         string    `json:"package"`
	TotalHolders    *int64    `json:"total_holders"`
	Holders         []holder  `json:"holders"`
}

type holder struct {
	ProjectName string `json:"project_name"`
	Branch      string `json:"branch"`
	Version     string `json:"version"`
}

type listed struct {
	Title    string `json:"title"`
	FilePath string `json:"file_path"`
	Line     int    `json:"line"`
	Urgency  string `json:"urgency"`
}

type ruleRef struct {
	Slug string `json:"slug"`
}

// Compose is the message of an event.
func Compose(in Input) (Message, error) {
	var p notify.Payload
	if err := json.Unmarshal(in.Payload, &p); err != nil {
		return Message{}, fmt.Errorf("chat message: payload: %w", err)
	}
	var d eventData
	if len(p.Data) > 0 {
		if err := json.Unmarshal(p.Data, &d); err != nil {
			return Message{}, fmt.Errorf("chat message: data: %w", err)
		}
	}
	m := Message{Link: link(in.AppURL, d), Footer: fmt.Sprintf("%s · %s · %s", text(p.Type, 64), text(p.ID, 200), text(p.CreatedAt, 40))}
	m.Summary, m.Context, m.Facts = describe(p.Type, d)
	m.Summary, m.Context = text(m.Summary, maxSummary), text(m.Context, maxContext)
	found := in.Findings
	if found == nil {
		for _, i := range d.Issues {
			found = append(found, Finding{Urgency: i.Urgency, Title: i.Title, Path: i.FilePath, Line: i.Line})
		}
		for _, h := range d.Holders {
			found = append(found, Finding{Title: project(eventData{ProjectName: h.ProjectName, Branch: h.Branch}), Package: d.Package + "@" + h.Version})
		}
	}
	for n, f := range found {
		if n == TopFindings {
			break
		}
		m.Findings = append(m.Findings, Finding{Urgency: text(f.Urgency, 8), Title: text(f.Title, maxTitle),
			Path: text(f.Path, maxPath), Line: f.Line, Package: text(f.Package, maxPath)})
	}
	m.More = len(found) - len(m.Findings)
	if d.Count != nil && (p.Type == "new_critical_issue" || p.Type == "new_high_issue") {
		m.More = max(m.More, int(*d.Count)-len(m.Findings))
	}
	if d.TotalHolders != nil && in.Findings == nil {
		m.More = max(m.More, int(*d.TotalHolders)-len(m.Findings))
	}
	return m, nil
}

// describe is an event's summary line, its context line and its counts.
func describe(typ string, d eventData) (string, string, []Fact) {
	where := project(d)
	var facts []Fact
	fact := func(name string, v *int64) {
		if v != nil {
			facts = append(facts, Fact{name, *v})
		}
	}
	ctx := where
	if d.Tool != "" {
		ctx = where + " · " + d.Tool
	}
	switch typ {
	case "new_critical_issue", "new_high_issue":
		level := strings.TrimSuffix(strings.TrimPrefix(typ, "new_"), "_issue")
		fact("New "+level+" issues", d.Count)
		return fmt.Sprintf("%s new %s issue%s in %s", count(d.Count), level, plural(d.Count), where), ctx, facts
	case "scan_completed":
		fact("Findings", d.Findings)
		return fmt.Sprintf("Scan of %s completed with %s finding%s", where, count(d.Findings), plural(d.Findings)), ctx, facts
	case "scan_failed":
		return fmt.Sprintf("Scan of %s failed", where), ctx + reason(d.FailedReason), facts
	case "sla_breach":
		return fmt.Sprintf("Issue past its SLA deadline in %s: %s", where, d.Title), "due " + d.DueDate, facts
	case "weekly_digest":
		fact("Open issues", d.OpenIssues)
		fact("Overdue", d.Overdue)
		fact("Due soon", d.DueSoon)
		return fmt.Sprintf("Weekly digest %s to %s: %s open issues", d.WeekStart, d.WeekEnd, count(d.OpenIssues)), "", facts
	case "integration_expired":
		return "A source-code-host integration's credentials expired", d.Name, facts
	case "policy_violation":
		fact("Blocked findings", d.Count)
		var slugs []string
		for _, r := range d.Rules {
			slugs = append(slugs, r.Slug)
		}
		return fmt.Sprintf("%s finding%s in %s violate a blocking policy", count(d.Count), plural(d.Count), where),
			ctx + reason(strings.Join(slugs, ", ")), facts
	case "issue_status_changed":
		return fmt.Sprintf("Issue %s → %s in %s: %s", d.PreviousStatus, d.Status, where, d.Title), ctx, facts
	case "risk_acceptance_expired":
		return fmt.Sprintf("Risk acceptance ended, issue reopened in %s: %s", where, d.Title), ctx, facts
	case "component_affected":
		fact("Holdings", d.TotalHolders)
		return fmt.Sprintf("%s affects %s, held by %s project branch%s", d.AdvisoryID, d.Package, count(d.TotalHolders), pluralES(d.TotalHolders)), "", facts
	case notify.TypeWebhookDisabled:
		return "A webhook endpoint was disabled", d.Reason, facts
	case "webhook_test":
		return "Test message from codescan: this destination receives notifications", "", facts
	}
	return "codescan event " + typ, ctx, facts
}

func project(d eventData) string {
	switch {
	case d.ProjectName == "":
		return "a project"
	case d.Branch == "":
		return d.ProjectName
	}
	return d.ProjectName + " (" + d.Branch + ")"
}

func reason(s string) string {
	if s == "" {
		return ""
	}
	return " · " + s
}

func count(v *int64) string {
	if v == nil {
		return "some"
	}
	return strconv.FormatInt(*v, 10)
}

func pluralES(v *int64) string {
	if v != nil && *v == 1 {
		return ""
	}
	return "es"
}

func plural(v *int64) string {
	if v != nil && *v == 1 {
		return ""
	}
	return "s"
}

// link is the page of the web application the event is about (as emails
// link: the issue, the scan, the integration, the webhook), else the issue
// list; "" without an application URL.
func link(appURL string, d eventData) string {
	base := strings.TrimRight(appURL, "/")
	if base == "" {
		return ""
	}
	for _, l := range []struct{ id, path string }{
		{d.IssueID, "/issues/"}, {d.ScanID, "/scans/"}, {d.IntegrationUUID, "/integrations/"}, {d.WebhookID, "/webhooks/"},
	} {
		if l.id != "" {
			return base + l.path + urlSegment(l.id)
		}
	}
	return base + "/issues"
}

// urlSegment keeps ids to what ids are made of.
func urlSegment(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return -1
	}, s)
}

// text is s made visible (cleantext: no control, bidi or format
// characters), on one line, cut to n characters.
func text(s string, n int) string {
	s = strings.Join(strings.Fields(cleantext.Visible(s)), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// location is where a finding is: file:line, the file, or its package.
func (f Finding) location() string {
	switch {
	case f.Path != "" && f.Line > 0:
		return f.Path + ":" + strconv.Itoa(f.Line)
	case f.Path != "":
		return f.Path
	}
	return f.Package
}

// Render is the body to post to a destination of kind.
func Render(kind string, in Input) ([]byte, error) {
	m, err := Compose(in)
	if err != nil {
		return nil, err
	}
	switch kind {
	case KindSlack:
		return Slack(m)
	case KindTeams:
		return Teams(m)
	}
	return nil, fmt.Errorf("chat message: unknown kind %q", kind)
}
