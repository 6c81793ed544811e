package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
)

// Kinds of endpoint: the signed webhooks of this package, and chat
// destinations, which take a message of their own format, unsigned (the
// URL is the secret: whoever holds it can post to the channel).
const (
	KindWebhook = "webhook"
	KindSlack   = "slack"
	KindTeams   = "teams"
)

// Kinds lists the kinds, the default first.
var Kinds = []string{KindWebhook, KindSlack, KindTeams}

// CheckKindURL is CheckURL with the rules of kind's receiver:
//   - slack: a Slack incoming webhook, https://hooks.slack.com/services/…
//   - teams: a Teams Workflows trigger, https://<…>.logic.azure.com/workflows/…
//     (the Logic Apps form) or
//     https://<…>.environment.api.powerplatform.com/powerautomate/…
//     (the Power Platform form);
//
// on port 443. With AllowLoopback, a loopback URL is accepted for any
// kind (local development and tests).
func (c *Client) CheckKindURL(kind, raw string) (string, error) {
	clean, err := c.CheckURL(raw)
	if err != nil || kind == KindWebhook {
		return clean, err
	}
	u, _ := url.Parse(clean)
	if c.opts.AllowLoopback && loopback(u.Hostname()) {
		return clean, nil
	}
	if u.Scheme != "https" || (u.Port() != "" && u.Port() != "443") {
		return "", errors.New("url must be an https URL on port 443")
	}
	host := strings.ToLower(u.Hostname())
	switch kind {
	case KindSlack:
		if host != "hooks.slack.com" || !slackPath.MatchString(u.EscapedPath()) {
			return "", errors.New("url must be a Slack incoming webhook URL: https://hooks.slack.com/services/…")
		}
	case KindTeams:
		logic := strings.HasSuffix(host, ".logic.azure.com") && strings.HasPrefix(u.EscapedPath(), "/workflows/")
		power := strings.HasSuffix(host, ".environment.api.powerplatform.com") && strings.HasPrefix(u.EscapedPath(), "/powerautomate/")
		if !logic && !power {
			return "", errors.New("url must be a Teams Workflows webhook URL: https://….logic.azure.com/workflows/… or https://….environment.api.powerplatform.com/powerautomate/…")
		}
	default:
		return "", errors.New("unknown kind")
	}
	return clean, nil
}

var slackPath = regexp.MustCompile(`^/services/[A-Za-z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9]+$`)

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Mask is a chat URL as the API shows it after creation: its scheme, host
// and first path segment; the rest (the secret) is "****".
func Mask(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "****"
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	return u.Scheme + "://" + u.Host + "/" + first + "/****"
}

// Post sends a chat message (a JSON body, unsigned) to endpoint once. The
// receiver's short error answer (Slack's invalid_payload, no_service, …)
// is in Result.Reason.
func (c *Client) Post(ctx context.Context, endpoint string, body []byte) Result {
	out, answer := c.post(ctx, endpoint, http.Header{"Content-Type": {"application/json; charset=utf-8"}}, body)
	if out.Err == nil && out.StatusCode >= 300 {
		out.Reason = reasonOf(answer)
	}
	return out
}

var reasonWord = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// reasonOf is a receiver's answer when it is one error code (Slack's
// plain-text answers), else "": never free text, which is the receiver's.
func reasonOf(b []byte) string {
	s := strings.TrimSpace(string(b))
	if reasonWord.MatchString(s) {
		return s
	}
	return ""
}

// Gone reports an answer meaning the receiver no longer exists: 404 or
// 410 (Slack's no_service, channel_not_found, channel_is_archived; a
// deleted Teams workflow).
func (r Result) Gone() bool {
	return r.Err == nil && (r.StatusCode == http.StatusNotFound || r.StatusCode == http.StatusGone)
}
