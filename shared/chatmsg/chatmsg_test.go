package chatmsg_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/chatmsg"
	"github.com/acme/codescan-api/shared/chatmsg/chattest"
	"github.com/acme/codescan-api/shared/notify"
)

func payload(t *testing.T, typ string, data map[string]any) []byte {
	t.Helper()
	raw, _ := json.Marshal(data)
	b, err := json.Marshal(notify.Payload{Type: typ, ID: typ + "-1", CreatedAt: "2026-11-27T10:00:00Z", CompanyID: 1, Data: raw})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hostile is report text that tries Slack's control syntax, Markdown,
// a bidi override and a control character.
const hostile = "<!channel> *bold* [x](https://evil.example) & <https://evil.example|click>\u202e\x07"

func events(t *testing.T) map[string][]byte {
	issues := []map[string]any{}
	for n := range 7 {
		issues = append(issues, map[string]any{"id": "i", "title": hostile, "file_path": "src/a`b.go", "line": n + 1, "urgency": "CR"})
	}
	return map[string][]byte{
		"new_critical_issue":      payload(t, "new_critical_issue", map[string]any{"scan_id": "s1", "project_name": "payments-api", "branch": "main", "count": 9, "issues": issues}),
		"new_high_issue":          payload(t, "new_high_issue", map[string]any{"scan_id": "s1", "project_name": "p", "count": 1, "issues": issues[:1]}),
		"scan_completed":          payload(t, "scan_completed", map[string]any{"scan_id": "s1", "project_name": hostile, "branch": "main", "tool": "semgrep", "findings": 1}),
		"scan_failed":             payload(t, "scan_failed", map[string]any{"scan_id": "s1", "project_name": "p", "failed_reason": hostile}),
		"sla_breach":              payload(t, "sla_breach", map[string]any{"issue_id": "i1", "project_name": "p", "title": hostile, "due_date": "2026-11-20T00:00:00Z"}),
		"weekly_digest":           payload(t, "weekly_digest", map[string]any{"week_start": "2026-11-16", "week_end": "2026-11-22", "open_issues": 40, "overdue": 3, "due_soon": 2}),
		"integration_expired":     payload(t, "integration_expired", map[string]any{"integration_uuid": "u1", "name": hostile}),
		"policy_violation":        payload(t, "policy_violation", map[string]any{"scan_id": "s1", "project_name": "p", "count": 2, "rules": []map[string]any{{"id": 1, "slug": hostile}}}),
		"issue_status_changed":    payload(t, "issue_status_changed", map[string]any{"issue_id": "i1", "project_name": "p", "title": hostile, "previous_status": "open", "status": "fixed"}),
		"risk_acceptance_expired": payload(t, "risk_acceptance_expired", map[string]any{"issue_id": "i1", "project_name": "p", "title": hostile}),
		"component_affected": payload(t, "component_affected", map[string]any{"advisory_id": "GHSA-1", "package": "lodash", "total_holders": 7,
			"holders": []map[string]any{{"project_name": hostile, "branch": "main", "version": "4.17.0"}}}),
		"webhook_test": payload(t, "webhook_test", map[string]any{"webhook_id": "w1"}),
	}
}

func TestEveryTypeRendersValid(t *testing.T) {
	for _, typ := range append(notify.Codes(), "webhook_test") {
		p, ok := events(t)[typ]
		if !ok { // a type without its own summary renders the generic one
			p = payload(t, typ, map[string]any{"project_name": hostile})
		}
		for _, kind := range []string{chatmsg.KindSlack, chatmsg.KindTeams} {
			body, err := chatmsg.Render(kind, chatmsg.Input{AppURL: "https://app.example/", Payload: p})
			if err != nil {
				t.Fatalf("%s %s: %v", typ, kind, err)
			}
			validate := chattest.ValidateSlack
			if kind == chatmsg.KindTeams {
				validate = chattest.ValidateTeams
			}
			if err := validate(body); err != nil {
				t.Errorf("%s %s: %v\n%s", typ, kind, err, body)
			}
			s := string(body)
			for _, bad := range []string{"<!channel>", "<https://evil", "\\u202e", "\\u0007"} {
				if strings.Contains(s, bad) {
					t.Errorf("%s %s: carries %q: %s", typ, kind, bad, body)
				}
			}
		}
	}
}

func TestNewIssuesMessage(t *testing.T) {
	p := events(t)["new_critical_issue"]
	m, err := chatmsg.Compose(chatmsg.Input{AppURL: "https://app.example", Payload: p})
	if err != nil {
		t.Fatal(err)
	}
	if m.Summary != "9 new critical issues in payments-api (main)" || len(m.Findings) != chatmsg.TopFindings || m.More != 4 ||
		m.Link != "https://app.example/scans/s1" || m.Facts[0] != (chatmsg.Fact{Name: "New critical issues", Value: 9}) {
		t.Fatalf("message: %+v", m)
	}
	slack, _ := chatmsg.Slack(m)
	want := "• *Critical*  &lt;!channel&gt; *bold* [x](https://evil.example) &amp; &lt;https://evil.example|click&gt;&lt;U+202E&gt;&lt;U+0007&gt;  `src/a'b.go:1`"
	if !strings.Contains(jsonText(t, slack), want) {
		t.Errorf("slack findings line missing %q in %s", want, slack)
	}
	teams, _ := chatmsg.Teams(m)
	if !strings.Contains(string(teams), `"type":"TextRun","text":"\u003c!channel\u003e *bold*`) {
		t.Errorf("teams text must be a TextRun as written: %s", teams)
	}
	// Findings the caller read win over the event's own list.
	m, _ = chatmsg.Compose(chatmsg.Input{Payload: p, Findings: []chatmsg.Finding{{Urgency: "HI", Title: "Dep", Package: "lodash"}}})
	if len(m.Findings) != 1 || m.Findings[0].Package != "lodash" || m.Link != "" || m.More != 8 {
		t.Fatalf("caller's findings: %+v", m)
	}
}

// jsonText is the JSON with its string escapes undone.
func jsonText(t *testing.T, b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			sb.WriteString(v + "\n")
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return sb.String()
}

func TestValidatorsRefuse(t *testing.T) {
	for _, c := range []struct {
		name  string
		body  string
		teams bool
	}{
		{"slack unknown block", `{"text":"x","blocks":[{"type":"nonsense"}]}`, false},
		{"slack long header", `{"text":"x","blocks":[{"type":"header","text":{"type":"plain_text","text":"` + strings.Repeat("a", 151) + `"}}]}`, false},
		{"slack mrkdwn header", `{"text":"x","blocks":[{"type":"header","text":{"type":"mrkdwn","text":"a"}}]}`, false},
		{"slack 11 fields", `{"text":"x","blocks":[{"type":"section","fields":[` + strings.TrimSuffix(strings.Repeat(`{"type":"mrkdwn","text":"a"},`, 11), ",") + `]}]}`, false},
		{"slack dropped member", `{"text":"x","blocks":[{"type":"divider","text":"x"}]}`, false},
		{"teams card unknown element", `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","content":{"type":"AdaptiveCard","version":"1.5","body":[{"type":"Nonsense"}]}}]}`, true},
		{"teams bad weight", `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","content":{"type":"AdaptiveCard","version":"1.5","body":[{"type":"TextBlock","text":"a","weight":"heavy"}]}}]}`, true},
		{"teams text block without text", `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","content":{"type":"AdaptiveCard","version":"1.5","body":[{"type":"TextBlock"}]}}]}`, true},
		{"teams no envelope", `{"type":"AdaptiveCard","version":"1.5","body":[]}`, true},
	} {
		validate := chattest.ValidateSlack
		if c.teams {
			validate = chattest.ValidateTeams
		}
		if err := validate([]byte(c.body)); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

// Compose's message is safe whatever renders it: every text made visible,
// on one line, bounded.
func TestComposeCleansEveryText(t *testing.T) {
	const maxContext = 2000 // what a message shows of its context line
	long := strings.Repeat("x", 3*maxContext)
	m, err := chatmsg.Compose(chatmsg.Input{Payload: payload(t, "scan_failed", map[string]any{"scan_id": "s1", "project_name": hostile + "\nsecond line",
		"tool": "semgrep", "failed_reason": hostile + long})})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"summary": m.Summary, "context": m.Context, "footer": m.Footer} {
		if strings.ContainsAny(s, "\u202e\x07\n") {
			t.Errorf("%s keeps invisible or line-breaking characters: %q", name, s)
		}
	}
	if n := utf8.RuneCountInString(m.Context); n != maxContext || !strings.HasSuffix(m.Context, "…") {
		t.Errorf("context of %d characters, want it cut to %d", n, maxContext)
	}
}
