package report_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/acme/codescan-api/functions/projects/report"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/trendchart"
)

// hostile holds every character class the edge refuses.
const hostile = "\x00\x1b[31m\a\u0085\u009b\x7f\u202e\u2066"

// escapedControl is a JSON escape of a character no output may show.
var escapedControl = regexp.MustCompile(`(?i)\\u(00[01][0-9a-f]|007f|008[0-9a-f]|009[0-9a-f]|202[a-e]|206[6-9])`)

// shown returns what of out a reader would see raw: a C0 control other
// than newline and tab, DEL, a C1 control, a bidi control, or a JSON
// escape of one; "" when there is none.
func shown(out string) string {
	for _, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return string(r)
		}
	}
	return escapedControl.FindString(out)
}

// hostileInput is a scan whose every text holds the refused characters,
// as an issue stored before ingestion cleaned report text would.
func hostileInput() report.Input {
	return report.Input{
		Project: "pay" + hostile,
		Scan: scans.Scan{ID: "s" + hostile, Branch: "main" + hostile, Tool: "tool" + hostile, Engine: "sarif" + hostile,
			RepoURL: "https://github.com/acme/x" + hostile, GitSHA: "abc" + hostile, CreatedAt: "2026" + hostile},
		Issues: []findings.Issue{{ID: "i" + hostile, Urgency: "HI" + hostile, Status: "open" + hostile, CWE: 79,
			FilePath: "src/" + hostile + ".go", Line: 3, RuleID: "rule" + hostile, Title: "title" + hostile + "\r\nnext",
			Message: "message" + hostile, Fingerprint: "fp" + hostile}},
		Trend: &trendchart.Input{Title: "Trend of pay" + hostile},
	}
}

// No rendering shows a refused character, raw or JSON-escaped: each is
// written out; the caller's issues are left as they were.
func TestReportsWriteTextVisible(t *testing.T) {
	in := hostileInput()
	sarif, err := report.SARIF(in)
	if err != nil {
		t.Fatal(err)
	}
	page, err := report.HTML(in)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string][]byte{"sarif": sarif, "markdown": report.Markdown(in), "html": page} {
		if bad := shown(string(out)); bad != "" {
			t.Errorf("%s shows %q:\n%s", name, bad, out)
		}
		// Each format escapes the "<" around them in its own way.
		for _, code := range []string{"0000", "001B", "0007", "0085", "009B", "007F", "202E", "2066"} {
			if !strings.Contains(string(out), "U+"+code) {
				t.Errorf("%s: U+%s is not written out:\n%s", name, code, out)
			}
		}
	}
	if in.Issues[0].Title != "title"+hostile+"\r\nnext" || in.Trend.Title != "Trend of pay"+hostile {
		t.Error("the caller's input was changed")
	}
}

// A value's "@" renders as "@" but mentions no one in the pull-request
// comment: an empty HTML comment follows it.
func TestMarkdownMentionsNoOne(t *testing.T) {
	in := report.Input{Project: "@acme/payments", Scan: scans.Scan{Branch: "fix@home"},
		Issues: []findings.Issue{{ID: "a", Urgency: "HI", Status: "open", CWE: 79, FilePath: "src/@scope/x.js", Line: 1,
			Title: "ping @alice and @org/security-team, mail root@example.com"}}}
	md := string(report.Markdown(in))
	if m := regexp.MustCompile(`@[^<]`).FindString(md); m != "" {
		t.Errorf("a live mention %q:\n%s", m, md)
	}
	for _, want := range []string{"## Security scan of @<!-- -->acme/payments on fix@<!-- -->home", "ping @<!-- -->alice and @<!-- -->org/security-team",
		"root@<!-- -->example.com", "src/@<!-- -->scope/x.js:1"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
