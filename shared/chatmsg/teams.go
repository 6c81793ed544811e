package chatmsg

import (
	"encoding/json"
	"strconv"
)

// Teams Workflows webhooks take a message activity whose attachment is an
// Adaptive Card ("Post to a channel when a webhook request is received").
const (
	adaptiveCardType    = "application/vnd.microsoft.card.adaptive"
	adaptiveCardSchema  = "http://adaptivecards.io/schemas/adaptive-card.json"
	adaptiveCardVersion = "1.5"
)

type teamsMessage struct {
	Type        string            `json:"type"`
	Attachments []teamsAttachment `json:"attachments"`
}

type teamsAttachment struct {
	ContentType string       `json:"contentType"`
	ContentURL  *string      `json:"contentUrl"`
	Content     adaptiveCard `json:"content"`
}

type adaptiveCard struct {
	Schema   string `json:"$schema"`
	Type     string `json:"type"`
	Version  string `json:"version"`
	Body     []any  `json:"body"`
	Actions  []any  `json:"actions,omitempty"`
	Fallback string `json:"fallbackText,omitempty"`
}

// textRun is text that renders no Markdown (Adaptive Cards: "TextRun does
// not support Markdown"), where every text of a report or a tenant goes.
type textRun struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Weight   string `json:"weight,omitempty"`
	Size     string `json:"size,omitempty"`
	IsSubtle bool   `json:"isSubtle,omitempty"`
	FontType string `json:"fontType,omitempty"`
}

type richText struct {
	Type    string    `json:"type"`
	Inlines []textRun `json:"inlines"`
	Spacing string    `json:"spacing,omitempty"`
}

func rich(runs ...textRun) richText { return richText{Type: "RichTextBlock", Inlines: runs} }

func run(s string) textRun { return textRun{Type: "TextRun", Text: s} }

type fact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

// Teams is m as the body of a Teams Workflows webhook: the summary, the
// context, the counts (a FactSet of our own labels and numbers), the
// findings, the event, and an action opening the application.
func Teams(m Message) ([]byte, error) {
	summary := run(m.Summary)
	summary.Weight, summary.Size = "Bolder", "Medium"
	body := []any{rich(summary)}
	if m.Context != "" {
		c := run(m.Context)
		c.IsSubtle = true
		body = append(body, rich(c))
	}
	if len(m.Facts) > 0 {
		var facts []fact
		for _, f := range m.Facts {
			facts = append(facts, fact{f.Name, strconv.FormatInt(f.Value, 10)})
		}
		body = append(body, map[string]any{"type": "FactSet", "facts": facts})
	}
	for _, f := range m.Findings {
		var runs []textRun
		if f.Urgency != "" {
			u := run(urgencyName(f.Urgency) + "  ")
			u.Weight = "Bolder"
			runs = append(runs, u)
		}
		runs = append(runs, run(f.Title))
		if loc := f.location(); loc != "" {
			l := run("  " + loc)
			l.FontType, l.IsSubtle = "Monospace", true
			runs = append(runs, l)
		}
		body = append(body, rich(runs...))
	}
	if m.More > 0 {
		more := run("and " + strconv.Itoa(m.More) + " more")
		more.IsSubtle = true
		body = append(body, rich(more))
	}
	footer := run(m.Footer)
	footer.IsSubtle, footer.Size = true, "Small"
	body = append(body, rich(footer))
	card := adaptiveCard{Schema: adaptiveCardSchema, Type: "AdaptiveCard", Version: adaptiveCardVersion, Body: body}
	if m.Link != "" {
		card.Actions = []any{map[string]string{"type": "Action.OpenUrl", "title": "Open in codescan", "url": m.Link}}
	}
	return json.Marshal(teamsMessage{Type: "message", Attachments: []teamsAttachment{{ContentType: adaptiveCardType, Content: card}}})
}
