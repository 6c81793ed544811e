// Package mail sends notification emails: through Amazon SES (sesv2) in
// AWS, and over SMTP to a local catcher (maildev) in development and tests.
package mail

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
)

// Message is one email with a plain-text and an HTML body.
type Message struct {
	To      string
	Subject string
	Text    string
	HTML    string
}

// Sender sends a message.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// SES sends through Amazon SES from one verified identity, with a
// configuration set (for bounce and complaint tracking) when named.
type SES struct {
	Client           *sesv2.Client
	From             string
	ConfigurationSet string
}

// Send implements Sender.
func (s *SES) Send(ctx context.Context, m Message) error {
	in := &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(s.From),
		Destination:      &sestypes.Destination{ToAddresses: []string{m.To}},
		Content: &sestypes.EmailContent{Simple: &sestypes.Message{
			Subject: &sestypes.Content{Data: aws.String(m.Subject), Charset: aws.String("UTF-8")},
			Body: &sestypes.Body{
				Text: &sestypes.Content{Data: aws.String(m.Text), Charset: aws.String("UTF-8")},
				Html: &sestypes.Content{Data: aws.String(m.HTML), Charset: aws.String("UTF-8")},
			},
		}},
	}
	if s.ConfigurationSet != "" {
		in.ConfigurationSetName = aws.String(s.ConfigurationSet)
	}
	if _, err := s.Client.SendEmail(ctx, in); err != nil {
		return fmt.Errorf("ses send: %w", err)
	}
	return nil
}

// SMTP sends to an SMTP server without authentication: the local catcher.
type SMTP struct {
	Addr string // host:port
	From string
}

// Send implements Sender.
func (s *SMTP) Send(_ context.Context, m Message) error {
	raw, err := Compose(s.From, m, time.Now())
	if err != nil {
		return err
	}
	if err := smtp.SendMail(s.Addr, nil, s.From, []string{m.To}, raw); err != nil {
		return fmt.Errorf("smtp send: %w", err)
	}
	return nil
}

// Compose builds a multipart/alternative MIME message.
func Compose(from string, m Message, at time.Time) ([]byte, error) {
	if _, err := mail.ParseAddress(m.To); err != nil {
		return nil, fmt.Errorf("recipient %q: %w", m.To, err)
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		return nil, fmt.Errorf("subject must be one line")
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, part := range []struct{ ctype, text string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
		w, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {part.ctype + "; charset=UTF-8"},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, err
		}
		qp := quotedprintable.NewWriter(w)
		if _, err := qp.Write([]byte(part.text)); err != nil {
			return nil, err
		}
		if err := qp.Close(); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	id := make([]byte, 12)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	domain := "localhost"
	if _, d, ok := strings.Cut(from, "@"); ok {
		domain = d
	}
	var msg bytes.Buffer
	fmt.Fprintf(&msg, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%s@%s>\r\nMIME-Version: 1.0\r\n",
		from, m.To, mime.QEncoding.Encode("UTF-8", m.Subject), at.UTC().Format(time.RFC1123Z), hex.EncodeToString(id), domain)
	fmt.Fprintf(&msg, "Content-Type: multipart/alternative; boundary=%q\r\n\r\n", mw.Boundary())
	msg.Write(body.Bytes())
	return msg.Bytes(), nil
}
