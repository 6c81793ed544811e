package prdecor_test

import (
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/acme/codescan-api/shared/prdecor"
	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

var codeSpan = regexp.MustCompile("(`+) .*? (`+)")

// Text a report brought reaches the comment visible and inert: no control
// or bidi character, no line break inside a table row, no mention, no
// code span broken out of.
func TestCommentWritesReportTextSafe(t *testing.T) {
	evil := findings.Issue{ID: "i1", Urgency: "CR", RuleID: "sqli\x1b[31m`|@octocat", CWE: 89, FilePath: "src/\u202egnp.exe\nx.py", Line: 3}
	s := prdecor.Summary{
		Scan:     scans.Scan{ID: "s1", Branch: "fix\u2066x", Tool: "Semgrep\x00@team", PullRequest: &pullrequest.PullRequest{HeadSHA: "abc1234"}},
		Project:  schema.Project{ID: 1, Name: "pay@ments\r\nx"},
		Baseline: "main", New: []findings.Issue{evil}, NewTotal: 1, Fixed: []findings.Issue{evil}, FixedTotal: 1,
		Blocking: map[string][]string{"i1": {"no-crit|icals"}},
	}
	body := prdecor.Comment(s)
	for _, r := range body {
		if (unicode.IsControl(r) && r != '\n') || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			t.Fatalf("raw U+%04X in the comment:\n%s", r, body)
		}
	}
	rows := 0
	for _, line := range strings.Split(body, "\n") {
		if !strings.Contains(line, "| CR |") {
			continue
		}
		if rows++; strings.Count(line, "|")-strings.Count(line, `\|`) != 7 {
			t.Fatalf("a report's text split the table row: %q", line)
		}
	}
	if rows != 1 {
		t.Fatalf("%d table rows of the finding, want 1:\n%s", rows, body)
	}
	// GitHub mentions no one inside a code span; outside, every @ is inert.
	prose := codeSpan.ReplaceAllString(body, "")
	if strings.Contains(strings.ReplaceAll(prose, "@<!-- -->", ""), "@") {
		t.Fatalf("a mention survived:\n%s", body)
	}
	if !strings.Contains(body, "<U+001B>") || !strings.Contains(body, "<U+202E>") {
		t.Fatalf("controls were dropped rather than written out:\n%s", body)
	}
}
