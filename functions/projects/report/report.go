// Package report renders a scan's issues as SARIF 2.1.0, as Markdown for a
// pull-request comment, and as a self-contained HTML page. The renderers
// are pure functions of the scan, its project's name and its issues. Every
// renderer first makes each text follow the edge's text rule (visible), so
// no control or bidi control character reaches a report.
package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/sariflog"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/trendchart"
)

// Input is what every report shows.
type Input struct {
	Scan    scans.Scan
	Project string
	Issues  []findings.Issue
	// Trend, when set, is the project's trend the HTML page shows (a
	// chart, time to fix and SLA compliance) above the issues.
	Trend *trendchart.Input
}

// sorted returns the issues most urgent first, then by file, line and id.
func sorted(issues []findings.Issue) []findings.Issue {
	out := slices.Clone(issues)
	slices.SortStableFunc(out, func(a, b findings.Issue) int {
		return cmp.Or(cmp.Compare(slices.Index(findings.Urgencies, a.Urgency), slices.Index(findings.Urgencies, b.Urgency)),
			cmp.Compare(a.FilePath, b.FilePath), cmp.Compare(a.Line, b.Line), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// cweID is the CWE id an issue shows ("" without one).
func cweID(i findings.Issue) string {
	if i.CWE == findings.NoCWE {
		return ""
	}
	return fmt.Sprintf("CWE-%d", i.CWE)
}

// title is what names an issue: its title, else its rule.
func title(i findings.Issue) string { return cmp.Or(i.Title, i.RuleID, "Finding") }

// Counts are the issues per urgency, most urgent first.
func counts(issues []findings.Issue) []urgencyCount {
	out := make([]urgencyCount, len(findings.Urgencies))
	for n, u := range findings.Urgencies {
		out[n].Urgency = u
	}
	for _, i := range issues {
		if n := slices.Index(findings.Urgencies, i.Urgency); n >= 0 {
			out[n].Count++
		}
	}
	return out
}

type urgencyCount struct {
	Urgency string
	Count   int
}

// The SARIF 2.1.0 log's parts that SARIF writes.
type (
	sarifResult struct {
		RuleID              string              `json:"ruleId"`
		RuleIndex           int                 `json:"ruleIndex"`
		Level               string              `json:"level"`
		Message             sariflog.Message    `json:"message"`
		Locations           []sariflog.Location `json:"locations"`
		PartialFingerprints map[string]string   `json:"partialFingerprints,omitempty"`
		Properties          map[string]any      `json:"properties"`
	}
	sarifRule struct {
		ID string `json:"id"`
	}
	sarifDriver struct {
		Name  string      `json:"name"`
		Rules []sarifRule `json:"rules"`
	}
	sarifVCS struct {
		RepositoryURI string `json:"repositoryUri"`
		RevisionID    string `json:"revisionId,omitempty"`
		Branch        string `json:"branch,omitempty"`
	}
	sarifRun struct {
		Tool struct {
			Driver sarifDriver `json:"driver"`
		} `json:"tool"`
		Results                  []sarifResult `json:"results"`
		VersionControlProvenance []sarifVCS    `json:"versionControlProvenance,omitempty"`
	}
)

// SARIF is the scan as a SARIF 2.1.0 log. Each issue keeps what identity
// and grouping need when the log is uploaded again: its rule id, its title
// as the result message, its file and line, its CWE (property and tag),
// its urgency (security-severity and level) and its fingerprint
// (partialFingerprints). Results of one fingerprint stem keep their
// original order (GitHub-style "#2" suffixes count by order).
func SARIF(in Input) ([]byte, error) {
	in = visible(in)
	runs := sarifRuns(in.Scan)
	d := &runs[0].Tool.Driver
	ruleIndex := map[string]int{}
	for _, i := range sarifOrder(in.Issues) {
		id := cmp.Or(i.RuleID, "finding")
		idx, ok := ruleIndex[id]
		if !ok {
			idx = len(d.Rules)
			ruleIndex[id] = idx
			d.Rules = append(d.Rules, sarifRule{ID: id})
		}
		runs[0].Results = append(runs[0].Results, sarifIssue(i, id, idx))
	}
	return json.MarshalIndent(map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": runs,
	}, "", "  ")
}

// sarifRuns are the log's empty runs: a scan of several tools ("a+b") is
// one run per tool, the results in the first, so the tools (and so the
// issues' identity) come back; the first carries the scan's repository.
func sarifRuns(sc scans.Scan) []sarifRun {
	tools := strings.Split(cmp.Or(sc.Tool, sc.Engine, "codescan"), "+")
	runs := make([]sarifRun, len(tools))
	for n, t := range tools {
		runs[n].Tool.Driver = sarifDriver{Name: t, Rules: []sarifRule{}}
		runs[n].Results = []sarifResult{}
	}
	if sc.RepoURL != "" {
		runs[0].VersionControlProvenance = []sarifVCS{{RepositoryURI: sc.RepoURL, RevisionID: sc.GitSHA, Branch: sc.Branch}}
	}
	return runs
}

// sarifOrder is a copy of the issues in the log's order: by fingerprint
// stem, then suffix number, then id (stable).
func sarifOrder(issues []findings.Issue) []findings.Issue {
	issues = slices.Clone(issues)
	slices.SortStableFunc(issues, func(a, b findings.Issue) int {
		sa, na := stem(a.Fingerprint)
		sb, nb := stem(b.Fingerprint)
		return cmp.Or(cmp.Compare(sa, sb), cmp.Compare(na, nb), cmp.Compare(a.ID, b.ID))
	})
	return issues
}

// sarifIssue is one issue as a result of rule id (at index idx of the
// run's rules).
func sarifIssue(i findings.Issue, id string, idx int) sarifResult {
	res := sarifResult{RuleID: id, RuleIndex: idx, Level: sariflog.Level(i.Urgency), Message: sariflog.Message{Text: title(i)},
		Properties: map[string]any{"security-severity": sariflog.SecuritySeverity(i.Urgency), "urgency": i.Urgency,
			"issue_id": i.ID, "status": i.Status}}
	res.Locations = []sariflog.Location{sariflog.At(i.FilePath, i.Line)}
	if i.Fingerprint != "" {
		res.PartialFingerprints = map[string]string{sariflog.FingerprintKey: i.Fingerprint}
	}
	if c := cweID(i); c != "" {
		res.Properties["cwe"] = c
		res.Properties["tags"] = sariflog.CWETags(i.CWE)
	}
	return res
}

// stem splits a fingerprint into its stem and its occurrence number ("x#2"
// is the second "x").
func stem(fp string) (string, int) {
	if s, n, ok := strings.Cut(fp, "#"); ok {
		if k, err := strconv.Atoi(n); err == nil {
			return s, k
		}
	}
	return fp, 1
}

// MaxMarkdownRows bounds the issues listed in a Markdown report (a
// pull-request comment holds at most 65,536 characters).
const MaxMarkdownRows = 100

var mdEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", "&lt;", ">", "&gt;", "#", `\#`, "\r", " ", "\n", " ", "@", mentionBreak)

// mentionBreak is what an "@" of a value becomes in Markdown: the "@" and
// an empty HTML comment. GitHub and GitLab find mentions in the rendered
// text, where `\@` or `&#64;` are a plain "@" again; the comment splits
// the text after the "@", so "@alice" in a finding's title renders as
// "@alice" but names and notifies no one. (A code span would do as well
// but changes how the text looks; a zero-width space is itself an
// invisible character this package keeps out.)
const mentionBreak = "@<!-- -->"

// md escapes text for a Markdown table cell.
func md(s string) string { return mdEscaper.Replace(s) }

// Markdown is the scan as a pull-request comment: a summary by urgency and
// a table of the most urgent issues. No value mentions anyone (see
// mentionBreak).
func Markdown(in Input) []byte {
	in = visible(in)
	var b bytes.Buffer
	fmt.Fprintf(&b, "## Security scan of %s", md(in.Project))
	if in.Scan.Branch != "" {
		fmt.Fprintf(&b, " on %s", md(in.Scan.Branch))
	}
	fmt.Fprintf(&b, "\n\n%d issue(s)", len(in.Issues))
	for _, c := range counts(in.Issues) {
		fmt.Fprintf(&b, " · %s %d", c.Urgency, c.Count)
	}
	b.WriteString("\n\n")
	if len(in.Issues) == 0 {
		b.WriteString("No issues found.\n")
		return b.Bytes()
	}
	b.WriteString("| Urgency | CWE | Location | Issue | Status |\n|---|---|---|---|---|\n")
	issues := sorted(in.Issues)
	for _, i := range issues[:min(len(issues), MaxMarkdownRows)] {
		loc := i.FilePath
		if i.Line > 0 {
			loc += ":" + strconv.Itoa(i.Line)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", md(i.Urgency), md(cweID(i)), md(loc), md(title(i)), md(i.Status))
	}
	if n := len(issues) - MaxMarkdownRows; n > 0 {
		fmt.Fprintf(&b, "\n…and %d more.\n", n)
	}
	return b.Bytes()
}

// HTML is the scan as one self-contained page (no scripts, no external
// resources). Every value goes through html.EscapeString, in element
// text and double-quoted attributes only. (html/template would do the
// same, but its reflection on methods keeps every method of every type in
// the binary: 4.5 MB more for this Lambda.)
func HTML(in Input) ([]byte, error) {
	in = visible(in)
	e := html.EscapeString
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
`)
	fmt.Fprintf(&b, "<title>Security scan of %s</title>\n", e(in.Project))
	b.WriteString(`<style>body{font-family:system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse;width:100%}
th,td{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f4f4f4}
.CR{color:#a00;font-weight:bold}.HI{color:#c50}.ME{color:#a80}.LO{color:#555}code{word-break:break-all}</style>
</head><body>
`)
	fmt.Fprintf(&b, "<h1>Security scan of %s</h1>\n<p>Scan <code>%s</code>", e(in.Project), e(in.Scan.ID))
	if in.Scan.Branch != "" {
		fmt.Fprintf(&b, " on branch <code>%s</code>", e(in.Scan.Branch))
	}
	if in.Scan.GitSHA != "" {
		fmt.Fprintf(&b, " at <code>%s</code>", e(in.Scan.GitSHA))
	}
	fmt.Fprintf(&b, ", %s.</p>\n<p>%d issue(s):", e(in.Scan.CreatedAt), len(in.Issues))
	for _, c := range counts(in.Issues) {
		fmt.Fprintf(&b, " %s %d;", c.Urgency, c.Count)
	}
	b.WriteString("</p>\n")
	if in.Trend != nil {
		b.Write(trendchart.Section(*in.Trend))
	}
	b.WriteString("<table><thead><tr><th>Urgency</th><th>CWE</th><th>Location</th><th>Issue</th><th>Status</th></tr></thead><tbody>\n")
	for _, i := range sorted(in.Issues) {
		loc := i.FilePath
		if i.Line > 0 {
			loc += ":" + strconv.Itoa(i.Line)
		}
		text := e(title(i))
		if i.Message != "" {
			text += "<br>" + e(i.Message)
		}
		fmt.Fprintf(&b, "<tr><td class=\"%s\">%s</td><td>%s</td><td><code>%s</code></td><td>%s</td><td>%s</td></tr>\n",
			e(i.Urgency), e(i.Urgency), e(cweID(i)), e(loc), text, e(i.Status))
	}
	b.WriteString("</tbody></table>\n</body></html>\n")
	return b.Bytes(), nil
}
