// Package emailrender renders the email of a notification (subject, plain
// text and HTML) with one typed function per event type, every value
// escaped for where it lands in the HTML. It replaces text/template and
// html/template: their run-time method lookup made the linker keep every
// exported method of every reachable type (the SES and KMS clients
// included), some 7 MB in each worker that sends email.
package emailrender

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/mail"
	"github.com/acme/codescan-api/shared/notify"
)

// email is a message being written: the HTML is written through htmlf,
// which escapes every string it is given.
type email struct {
	subject, text, html strings.Builder
}

func (e *email) subjectf(format string, args ...any) { fmt.Fprintf(&e.subject, format, args...) }
func (e *email) textf(format string, args ...any)    { fmt.Fprintf(&e.text, format, args...) }

// htmlf writes HTML: format is markup, its string arguments are text.
func (e *email) htmlf(format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = html(s)
		}
	}
	fmt.Fprintf(&e.html, format, args...)
}

// renderers write the body of each type's email (between the common head
// and footer); every notification type has one (a test checks).
var renderers = map[string]func(json.RawMessage, *email) error{
	"new_critical_issue":       typed(newIssues("critical")),
	"new_high_issue":           typed(newIssues("high")),
	"scan_completed":           typed(scanCompleted),
	"scan_failed":              typed(scanFailed),
	"sla_breach":               typed(slaBreach),
	"weekly_digest":            typed(weeklyDigest),
	"integration_expired":      typed(integrationExpired),
	"policy_violation":         typed(policyViolation),
	"issue_status_changed":     typed(issueStatusChanged),
	"risk_acceptance_expired":  typed(riskAcceptanceExpired),
	"component_affected":       typed(componentAffected),
	notify.TypeWebhookDisabled: typed(webhookDisabled),
}

// typed decodes an event's data for its renderer.
func typed[T any](render func(T, *email)) func(json.RawMessage, *email) error {
	return func(raw json.RawMessage, e *email) error {
		var data T
		if err := json.Unmarshal(raw, &data); err != nil {
			return err
		}
		render(data, e)
		return nil
	}
}

// Render builds the email of a delivery payload (notify.Payload) for the
// recipient to. Its link leads into the web application at appURL.
func Render(appURL, to string, payload []byte) (mail.Message, error) {
	var p notify.Payload
	if err := json.Unmarshal(payload, &p); err != nil {
		return mail.Message{}, err
	}
	render, ok := renderers[p.Type]
	if !ok {
		return mail.Message{}, fmt.Errorf("no email for type %s", p.Type)
	}
	var ids linkIDs
	if err := json.Unmarshal(p.Data, &ids); err != nil {
		return mail.Message{}, err
	}
	link := ids.link(appURL)
	e := &email{}
	e.html.WriteString(`<!doctype html><html><body style="font-family:sans-serif;max-width:640px">`)
	if err := render(p.Data, e); err != nil {
		return mail.Message{}, err
	}
	e.textf("\n\nOpen: %s\n\nYou receive this because of your notification settings (%s); change them with POST /api/v1/notifications/preferences/%[2]s.\nEvent %s, %s.",
		link, p.Type, p.ID, p.CreatedAt)
	fmt.Fprintf(&e.html, `<p><a href="%s">Open in codescan</a></p>`, hrefValue(link))
	e.htmlf("\n<p style=\"color:#666;font-size:12px\">You receive this because of your notification settings (%s). Event %s, %s.</p></body></html>",
		p.Type, p.ID, p.CreatedAt)
	return mail.Message{
		To: to, Subject: strings.Join(strings.Fields(e.subject.String()), " "),
		Text: strings.TrimSpace(e.text.String()) + "\n", HTML: e.html.String(),
	}, nil
}

// linkIDs are the ids an event's link can be built from.
type linkIDs struct {
	IssueID         string `json:"issue_id"`
	ScanID          string `json:"scan_id"`
	IntegrationUUID string `json:"integration_uuid"`
	WebhookID       string `json:"webhook_id"`
}

// link is the page of the web application the event is about: the issue,
// the scan, the integration or the webhook it names, else the issue list.
func (ids linkIDs) link(appURL string) string {
	base := strings.TrimRight(appURL, "/")
	for _, l := range []struct{ id, path string }{
		{ids.IssueID, "/issues/"}, {ids.ScanID, "/scans/"}, {ids.IntegrationUUID, "/integrations/"}, {ids.WebhookID, "/webhooks/"},
	} {
		if l.id != "" {
			return base + l.path + l.id
		}
	}
	return base + "/issues"
}

type scanData struct {
	ProjectName  string `json:"project_name"`
	Branch       string `json:"branch"`
	Tool         string `json:"tool"`
	Findings     int64  `json:"findings"`
	FailedReason string `json:"failed_reason"`
}

func scanCompleted(d scanData, e *email) {
	e.subjectf("Scan completed: %s (%s)", d.ProjectName, d.Branch)
	e.textf("The %s scan of %s on branch %s completed with %d findings.", d.Tool, d.ProjectName, d.Branch, d.Findings)
	e.htmlf("<h2>Scan completed</h2>\n<p>The %s scan of <b>%s</b> on branch <b>%s</b> completed with %d findings.</p>\n",
		d.Tool, d.ProjectName, d.Branch, d.Findings)
}

func scanFailed(d scanData, e *email) {
	e.subjectf("Scan failed: %s (%s)", d.ProjectName, d.Branch)
	e.textf("The %s scan of %s on branch %s failed: %s", d.Tool, d.ProjectName, d.Branch, d.FailedReason)
	e.htmlf("<h2>Scan failed</h2>\n<p>The %s scan of <b>%s</b> on branch <b>%s</b> failed: %s</p>\n",
		d.Tool, d.ProjectName, d.Branch, d.FailedReason)
}

type newIssuesData struct {
	ProjectName string `json:"project_name"`
	Branch      string `json:"branch"`
	Count       int64  `json:"count"`
	Issues      []struct {
		Title    string `json:"title"`
		FilePath string `json:"file_path"`
		Line     int64  `json:"line"`
	} `json:"issues"`
}

// newIssues renders new_critical_issue and new_high_issue.
func newIssues(urgency string) func(newIssuesData, *email) {
	return func(d newIssuesData, e *email) {
		e.subjectf("%d new %s issue(s) in %s (%s)", d.Count, urgency, d.ProjectName, d.Branch)
		e.textf("The latest scan of %s on branch %s found %d new %s-urgency issue(s):\n", d.ProjectName, d.Branch, d.Count, urgency)
		e.htmlf("<h2>%d new %s issue(s)</h2>\n<p>The latest scan of <b>%s</b> on branch <b>%s</b> found:</p>\n<ul>",
			d.Count, urgency, d.ProjectName, d.Branch)
		for _, i := range d.Issues {
			at := i.FilePath
			if i.Line != 0 {
				at += ":" + strconv.FormatInt(i.Line, 10)
			}
			e.textf("\n- %s (%s)", i.Title, at)
			e.htmlf("<li>%s (<code>%s</code>)</li>", i.Title, at)
		}
		e.html.WriteString("</ul>\n")
	}
}

type issueStatusData struct {
	Title          string `json:"title"`
	ProjectName    string `json:"project_name"`
	PreviousStatus string `json:"previous_status"`
	Status         string `json:"status"`
}

func issueStatusChanged(d issueStatusData, e *email) {
	e.subjectf("Issue %s: %s", d.Status, d.Title)
	e.textf("The issue \"%s\" in %s changed from %s to %s.", d.Title, d.ProjectName, d.PreviousStatus, d.Status)
	e.htmlf("<h2>Issue status changed</h2>\n<p>The issue <b>%s</b> in %s changed from %s to <b>%s</b>.</p>\n",
		d.Title, d.ProjectName, d.PreviousStatus, d.Status)
}

type riskAcceptanceExpiredData struct {
	Title       string `json:"title"`
	Urgency     string `json:"urgency"`
	ProjectName string `json:"project_name"`
	Branch      string `json:"branch"`
	ExpiresAt   string `json:"expires_at"`
}

func riskAcceptanceExpired(d riskAcceptanceExpiredData, e *email) {
	e.subjectf("Risk acceptance ended: %s (%s)", d.Title, d.Urgency)
	e.textf("The accepted risk \"%s\" in %s (%s) ended %s: the issue is open again and its SLA clock restarted.",
		d.Title, d.ProjectName, d.Branch, d.ExpiresAt)
	e.htmlf("<h2>Risk acceptance ended</h2>\n<p>The accepted risk <b>%s</b> in %s (%s) ended <b>%s</b>: the issue is open again and its SLA clock restarted.</p>\n",
		d.Title, d.ProjectName, d.Branch, d.ExpiresAt)
}

type slaBreachData struct {
	Title          string `json:"title"`
	Urgency        string `json:"urgency"`
	ProjectName    string `json:"project_name"`
	FirstDetection string `json:"first_detection_date"`
	Due            string `json:"due_date"`
}

func slaBreach(d slaBreachData, e *email) {
	e.subjectf("SLA breached: %s (%s)", d.Title, d.Urgency)
	e.textf("The %s issue \"%s\" in %s, first detected %s, was due %s and is still open.",
		d.Urgency, d.Title, d.ProjectName, d.FirstDetection, d.Due)
	e.htmlf("<h2>SLA breached</h2>\n<p>The %s issue <b>%s</b> in %s, first detected %s, was due <b>%s</b> and is still open.</p>\n",
		d.Urgency, d.Title, d.ProjectName, d.FirstDetection, d.Due)
}

type weeklyDigestData struct {
	WeekStart  string `json:"week_start"`
	WeekEnd    string `json:"week_end"`
	OpenIssues int64  `json:"open_issues"`
	ByUrgency  struct {
		CR, HI, ME, LO int64
	} `json:"open_by_urgency"`
	Overdue int64 `json:"overdue"`
	DueSoon int64 `json:"due_soon"`
}

func weeklyDigest(d weeklyDigestData, e *email) {
	u := d.ByUrgency
	e.subjectf("Weekly digest: %d open issues, %d overdue", d.OpenIssues, d.Overdue)
	e.textf("Week of %s to %s:\nopen issues: %d (critical %d, high %d, medium %d, low %d)\npast their SLA: %d; due soon: %d",
		d.WeekStart, d.WeekEnd, d.OpenIssues, u.CR, u.HI, u.ME, u.LO, d.Overdue, d.DueSoon)
	e.htmlf("<h2>Weekly digest</h2>\n<p>Week of %s to %s.</p>\n<table><tr><td>Open issues</td><td>%d</td></tr>\n"+
		"<tr><td>Critical / high / medium / low</td><td>%d / %d / %d / %d</td></tr>\n"+
		"<tr><td>Past their SLA</td><td>%d</td></tr><tr><td>Due soon</td><td>%d</td></tr></table>\n",
		d.WeekStart, d.WeekEnd, d.OpenIssues, u.CR, u.HI, u.ME, u.LO, d.Overdue, d.DueSoon)
}

type integrationData struct {
	UUID        string `json:"integration_uuid"`
	Name        string `json:"name"`
	AccountName string `json:"account_name"`
	BaseURL     string `json:"base_url"`
	Reason      string `json:"reason"`
}

func integrationExpired(d integrationData, e *email) {
	e.subjectf("Integration credentials expired: %s", d.Name)
	e.textf("The credentials of the integration \"%s\" (%s, account %s) were rejected by the host: %s\n"+
		"Send a new token with PATCH /api/v1/integrations/scm-provider/%s.", d.Name, d.BaseURL, d.AccountName, d.Reason, d.UUID)
	e.htmlf("<h2>Integration credentials expired</h2>\n<p>The credentials of the integration <b>%s</b> (%s, account %s) were rejected by the host: %s</p>\n",
		d.Name, d.BaseURL, d.AccountName, d.Reason)
}

type policyViolationData struct {
	ProjectName string `json:"project_name"`
	Branch      string `json:"branch"`
	Count       int64  `json:"count"`
	Rules       []struct {
		Slug string `json:"slug"`
	} `json:"rules"`
}

func policyViolation(d policyViolationData, e *email) {
	e.subjectf("Blocking rules violated in %s (%s)", d.ProjectName, d.Branch)
	e.textf("A CI check of a scan of %s on branch %s was blocked: %d issue(s) triggered", d.ProjectName, d.Branch, d.Count)
	e.htmlf("<h2>Blocking rules violated</h2>\n<p>A CI check of a scan of <b>%s</b> on branch <b>%s</b> was blocked: %d issue(s) triggered",
		d.ProjectName, d.Branch, d.Count)
	for n, r := range d.Rules {
		sep := " "
		if n > 0 {
			sep = ", "
		}
		e.textf("%s%s", sep, r.Slug)
		e.html.WriteString(sep)
		e.htmlf("<code>%s</code>", r.Slug)
	}
	e.textf(".")
	e.html.WriteString(".</p>\n")
}

type webhookDisabledData struct {
	WebhookID string `json:"webhook_id"`
	URL       string `json:"url"`
	Reason    string `json:"reason"`
}

func webhookDisabled(d webhookDisabledData, e *email) {
	e.subjectf("Webhook endpoint disabled: %s", d.URL)
	e.textf("The webhook endpoint %s was disabled: %s.\nFix the receiver, then turn it on again with PATCH /api/v1/webhooks/%s {\"active\": true}.",
		d.URL, d.Reason, d.WebhookID)
	e.htmlf("<h2>Webhook endpoint disabled</h2>\n<p>The webhook endpoint <code>%s</code> was disabled: %s.</p>\n"+
		"<p>Fix the receiver, then turn it on again with <code>PATCH /api/v1/webhooks/%s</code> <code>{\"active\": true}</code>.</p>\n",
		d.URL, d.Reason, d.WebhookID)
}
