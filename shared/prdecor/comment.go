package prdecor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/cwe"
	"github.com/acme/codescan-api/shared/prtriage"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/store/findings"
)

// Marker is the hidden first line of a project's summary comment: a
// decoration that lost its link item (or never wrote it) finds the
// comment again by it among the pull request's comments.
func Marker(projectID int64) string {
	return fmt.Sprintf("<!-- codescan:summary project=%d -->", projectID)
}

// maxComment keeps a comment under GitHub's 65,536 characters.
const maxComment = 60_000

// Comment is the Markdown of a summary. Every text that came from a
// report is written safe (cleantext.Visible, Markdown and mentions
// escaped): a rule id or a path is the report's, not ours.
func Comment(s Summary) string {
	var b strings.Builder
	b.WriteString(Marker(s.Project.ID) + "\n")
	fmt.Fprintf(&b, "### %s Codescan · %s\n\n", verdictIcon(s), safeLine(s.Project.Name))
	b.WriteString(headline(s) + "\n\n")
	if len(s.New) > 0 {
		newTable(&b, s)
	}
	if len(s.Fixed) > 0 {
		fixedList(&b, s)
	}
	fmt.Fprintf(&b, "<sub>Scan `%s` of `%s` at `%s`, tool %s.</sub>\n", s.Scan.ID, safeLine(s.Scan.Branch), shortSHA(s), safeLine(s.Scan.Tool))
	out := b.String()
	if len(out) > maxComment {
		out = norm.ClipTo(out, maxComment) + "\n\n… (cut: the summary is longer than a comment may be)\n"
	}
	return out
}

func verdictIcon(s Summary) string {
	if s.Failing() {
		return "❌"
	}
	return "✅"
}

// headline says what the pull request adds against its baseline.
func headline(s Summary) string {
	base := "no baseline branch"
	if s.Baseline != "" {
		base = "`" + safeLine(s.Baseline) + "`"
	}
	verdict := "No new finding blocks this pull request."
	if s.Failing() {
		verdict = fmt.Sprintf("**%d new finding(s) block this pull request** (CI blocking rules).", len(s.Blocking))
	}
	return fmt.Sprintf("%s Compared with %s: **%d new**, %d already on the base branch (left out), %d fixed on this branch.",
		verdict, base, s.NewTotal, s.LeftOut, s.FixedTotal)
}

func newTable(b *strings.Builder, s Summary) {
	// Ref names the finding in a reviewer's triage command
	// (/codescan ignore <ref> <reason>, see shared/prtriage).
	b.WriteString("| Ref | Urgency | Rule | CWE | Location | Blocks |\n|---|---|---|---|---|---|\n")
	for _, i := range s.New {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", code(prtriage.Ref(i.ID)), i.Urgency, code(i.RuleID), cweText(i.CWE), code(location(i)), cell(strings.Join(s.Blocking[i.ID], ", ")))
	}
	if more := s.NewTotal - len(s.New); more > 0 {
		fmt.Fprintf(b, "\n… and %d more new finding(s).\n", more)
	}
	b.WriteString("\n")
	for _, i := range s.New {
		if i.Fix != nil && i.Fix.Diff != "" {
			suggestedFix(b, i)
		}
	}
}

// suggestedFix shows the scanner's own fix of a finding (a diff checked
// against the file the run uploaded, see shared/finding/fixdiff), folded.
func suggestedFix(b *strings.Builder, i findings.Issue) {
	fmt.Fprintf(b, "<details><summary>Suggested fix for %s (the scanner's own)</summary>\n\n", code(location(i)))
	if e := strings.TrimSpace(i.Fix.Explanation); e != "" {
		b.WriteString(safeLine(e) + "\n\n")
	}
	diff := cleantext.VisibleLines(i.Fix.Diff)
	fence := "```"
	for strings.Contains(diff, fence) {
		fence += "`"
	}
	fmt.Fprintf(b, "%sdiff\n%s\n%s\n\n</details>\n\n", fence, strings.TrimRight(diff, "\n"), fence)
}

func fixedList(b *strings.Builder, s Summary) {
	b.WriteString("**Fixed on this branch**\n\n")
	for _, i := range s.Fixed {
		fmt.Fprintf(b, "- ~~%s %s %s~~\n", i.Urgency, code(i.RuleID), code(location(i)))
	}
	if more := s.FixedTotal - int64(len(s.Fixed)); more > 0 {
		fmt.Fprintf(b, "- … and %d more\n", more)
	}
	b.WriteString("\n")
}

func location(i findings.Issue) string {
	if i.Line > 0 {
		return i.FilePath + ":" + strconv.Itoa(i.Line)
	}
	return i.FilePath
}

func cweText(id int) string {
	if id <= 0 {
		return "–"
	}
	return cwe.FormatID(id)
}

func shortSHA(s Summary) string {
	sha := s.Scan.GitSHA
	if pr := s.Scan.PullRequest; sha == "" && pr != nil {
		sha = pr.HeadSHA
	}
	if len(sha) > 12 {
		sha = sha[:12]
	}
	if sha == "" {
		return "unknown commit"
	}
	return safeLine(sha)
}

var (
	inlineEscapes = strings.NewReplacer("\n", " ", "\r", " ", "@", "@<!-- -->", "<", "&lt;", ">", "&gt;")
	codeEscapes   = strings.NewReplacer("\n", " ", "\r", " ", "|", "¦")
)

// safeLine is report text made safe for a line of Markdown: visible
// controls, no line breaks, no mention (an @ is followed by an empty
// comment, which renders as nothing and notifies no one).
func safeLine(s string) string {
	s = cleantext.Visible(s)
	s = inlineEscapes.Replace(s)
	return s
}

// code is text in a code span, whatever backticks it holds.
func code(s string) string {
	s = codeEscapes.Replace(cleantext.Visible(s))
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + " " + s + " " + fence
}

// cell is text for a table cell.
func cell(s string) string {
	return strings.ReplaceAll(safeLine(s), "|", "\\|")
}
