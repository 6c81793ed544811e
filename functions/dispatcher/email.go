package dispatcher

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"strconv"
	"strings"
	texttemplate "text/template"

	"github.com/acme/codescan-api/functions/notifications"
	"github.com/acme/codescan-api/shared/mail"
	"github.com/acme/codescan-api/shared/store"
)

//go:embed templates/*.tmpl
var templateFiles embed.FS

// emailTemplate is one type's subject, text and HTML bodies.
type emailTemplate struct {
	text *texttemplate.Template // "subject" and "text"
	html *htmltemplate.Template // "html", escaped contextually
}

// templates holds one email template per notification type (and the
// operational webhook_disabled); a missing one fails at start-up.
var templates = func() map[string]emailTemplate {
	out := map[string]emailTemplate{}
	for _, code := range append(notifications.Codes(), TypeWebhookDisabled) {
		files := []string{"templates/common.tmpl", "templates/" + code + ".tmpl"}
		out[code] = emailTemplate{
			text: texttemplate.Must(texttemplate.New(code).ParseFS(templateFiles, files...)),
			html: htmltemplate.Must(htmltemplate.New(code).ParseFS(templateFiles, files...)),
		}
	}
	return out
}()

// emailData is what a template sees.
type emailData struct {
	Type      string
	EventID   string
	CreatedAt string
	Data      map[string]any
	Link      string
}

// Render builds the email of a delivery payload for the recipient.
func Render(appURL, to string, payload []byte) (mail.Message, error) {
	var p Payload
	if err := json.Unmarshal(payload, &p); err != nil {
		return mail.Message{}, err
	}
	t, ok := templates[p.Type]
	if !ok {
		return mail.Message{}, fmt.Errorf("no email template for %s", p.Type)
	}
	data := emailData{Type: p.Type, EventID: p.ID, CreatedAt: p.CreatedAt, Data: map[string]any{}}
	if err := json.Unmarshal(p.Data, &data.Data); err != nil {
		return mail.Message{}, err
	}
	data.Link = link(appURL, data.Data)
	var subject, text, html bytes.Buffer
	if err := t.text.ExecuteTemplate(&subject, "subject", data); err != nil {
		return mail.Message{}, err
	}
	if err := t.text.ExecuteTemplate(&text, "text", data); err != nil {
		return mail.Message{}, err
	}
	if err := t.html.ExecuteTemplate(&html, "html", data); err != nil {
		return mail.Message{}, err
	}
	return mail.Message{
		To: to, Subject: strings.Join(strings.Fields(subject.String()), " "),
		Text: strings.TrimSpace(text.String()) + "\n", HTML: html.String(),
	}, nil
}

// link is the page of the web application the event is about: the issue,
// the scan, the integration or the webhook it names, else the issue list.
func link(appURL string, data map[string]any) string {
	base := strings.TrimRight(appURL, "/")
	for _, k := range []struct{ key, path string }{
		{"issue_id", "/issues/"}, {"scan_id", "/scans/"}, {"integration_uuid", "/integrations/"}, {"webhook_id", "/webhooks/"},
	} {
		if v, ok := data[k.key].(string); ok && v != "" {
			return base + k.path + v
		}
	}
	return base + "/issues"
}

// sendEmail renders the delivery for its user and sends it.
func (d *Dispatcher) sendEmail(ctx context.Context, del store.Delivery) error {
	userID, err := strconv.ParseInt(del.Recipient, 10, 64)
	if err != nil {
		return errNoRecipient
	}
	u, err := d.Store.GetUser(ctx, del.CompanyID, userID)
	if errors.Is(err, store.ErrNotFound) || err == nil && (!u.Active || u.Email == "") {
		return errNoRecipient
	}
	if err != nil {
		return err
	}
	if d.Mail == nil {
		return errors.New("no mail sender configured")
	}
	m, err := Render(d.AppURL, u.Email, []byte(del.Payload))
	if err != nil {
		return err
	}
	return d.Mail.Send(ctx, m)
}
