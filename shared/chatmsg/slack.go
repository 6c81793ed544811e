package chatmsg

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/slack-go/slack"
)

// urgencyNames are the urgency codes as messages show them.
var urgencyNames = map[string]string{"CR": "Critical", "HI": "High", "ME": "Medium", "LO": "Low", "IN": "Info"}

func urgencyName(code string) string {
	if n, ok := urgencyNames[code]; ok {
		return n
	}
	return code
}

// mrkdwn escapes text for Slack's mrkdwn: &, < and > as Slack asks
// (https://api.slack.com/reference/surfaces/formatting#escaping), so no
// text can open a mention (<!channel>, <@U…>) or a link (<url|label>);
// text objects are also sent verbatim (no automatic linking of names and
// URLs).
func mrkdwn(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// code is s inside an inline code span (a backtick in s would end it).
func code(s string) string {
	return "`" + strings.ReplaceAll(mrkdwn(s), "`", "'") + "`"
}

// Slack is m as a Slack incoming-webhook message: a header (the summary),
// the context, the counts as fields, the findings, a button to the
// application and the event in a context block; Text is the notification's
// plain fallback.
func Slack(m Message) ([]byte, error) {
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, m.Summary, false, false)),
	}
	if m.Context != "" {
		blocks = append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, mrkdwn(m.Context), false, true)))
	}
	if len(m.Facts) > 0 {
		var fields []*slack.TextBlockObject
		for _, f := range m.Facts[:min(len(m.Facts), 10)] {
			fields = append(fields, slack.NewTextBlockObject(slack.MarkdownType, fmt.Sprintf("*%s*\n%d", mrkdwn(f.Name), f.Value), false, true))
		}
		blocks = append(blocks, slack.NewSectionBlock(nil, fields, nil))
	}
	if len(m.Findings) > 0 {
		var b strings.Builder
		for _, f := range m.Findings {
			b.WriteString("• ")
			if f.Urgency != "" {
				fmt.Fprintf(&b, "*%s*  ", mrkdwn(urgencyName(f.Urgency)))
			}
			b.WriteString(mrkdwn(f.Title))
			if loc := f.location(); loc != "" {
				b.WriteString("  " + code(loc))
			}
			b.WriteByte('\n')
		}
		if m.More > 0 {
			fmt.Fprintf(&b, "_and %d more_", m.More)
		}
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, strings.TrimSpace(b.String()), false, true), nil, nil))
	}
	if m.Link != "" {
		button := slack.NewButtonBlockElement("open", "", slack.NewTextBlockObject(slack.PlainTextType, "Open in codescan", false, false)).WithURL(m.Link)
		blocks = append(blocks, slack.NewActionBlock("", button))
	}
	blocks = append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, mrkdwn(m.Footer), false, true)))
	unfurl := false
	return json.Marshal(slack.WebhookMessage{Text: mrkdwn(m.Summary), Blocks: &slack.Blocks{BlockSet: blocks}, UnfurlLinks: &unfurl, UnfurlMedia: &unfurl})
}
