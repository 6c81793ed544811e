// Package semgrep turns Semgrep's own JSON output (`semgrep scan --json`,
// what the real client uploads with engine=semgrep) into findings.
// Results of security rules (metadata.category "security", or a CWE in
// metadata.cwe) are SAST findings; the others are code quality findings
// classified by their category.
package semgrep

import (
	"encoding/json"
	"strings"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

// Tool is the findings' tool name.
const Tool = "semgrep"

// MissingRuleID is the Dropped reason of a result without check_id.
const MissingRuleID = "missing_rule_id"

// loginPlaceholder is what Semgrep writes as the fingerprint and the
// matched lines when it runs logged out: no identity, no code.
const loginPlaceholder = "requires login"

func unlessPlaceholder(s string) string {
	if strings.TrimSpace(s) == loginPlaceholder {
		return ""
	}
	return s
}

const format = "Semgrep JSON"

// output is the part of Semgrep's CLI output schema (semgrep_output_v1,
// cli_output) that findings need.
type output struct {
	Results *[]result `json:"results"`
}

type result struct {
	CheckID string   `json:"check_id"`
	Path    string   `json:"path"`
	Start   position `json:"start"`
	End     position `json:"end"`
	Extra   struct {
		Message     string   `json:"message"`
		Severity    string   `json:"severity"`
		Fingerprint string   `json:"fingerprint"`
		Lines       string   `json:"lines"`
		Metadata    metadata `json:"metadata"`
		// IsIgnored marks a result a `nosemgrep` comment suppresses; Semgrep
		// keeps such results in its JSON only when asked to
		// (--disable-nosem), and records no justification.
		IsIgnored bool `json:"is_ignored"`
		// Fix is the text that replaces the match (the rule's `fix`,
		// rendered; "" deletes it), FixedLines the lines the match's lines
		// become with it (with --dryrun; absent when they become nothing).
		Fix        *string  `json:"fix"`
		FixedLines []string `json:"fixed_lines"`
	} `json:"extra"`
}

type position struct {
	Line int `json:"line"`
	Col  int `json:"col"`
}

// metadata is the rule's free-form metadata: only cwe (a string or a list
// of strings) and category are read, so other members may be anything.
type metadata struct {
	CWE      json.RawMessage `json:"cwe"`
	Category any             `json:"category"`
}

// Parse reads Semgrep's JSON output and returns its findings in report
// order; results without a check_id or with a path outside the repository
// are counted in Dropped.
func Parse(data []byte) (reportfinding.Report, error) {
	var out output
	if err := reporterr.Unmarshal(format, data, &out); err != nil {
		return reportfinding.Report{}, err
	}
	if out.Results == nil {
		return reportfinding.Report{}, reporterr.Invalidf(format, `missing "results"`)
	}
	if len(*out.Results) > norm.MaxFindings {
		return reportfinding.Report{}, &reporterr.TooLarge{What: "results", Limit: norm.MaxFindings}
	}
	rep := reportfinding.Report{Tools: []string{Tool}}
	for _, r := range *out.Results {
		f, dropped := convert(r)
		if dropped != "" {
			if rep.Dropped == nil {
				rep.Dropped = map[string]int{}
			}
			rep.Dropped[dropped]++
			continue
		}
		rep.Findings = append(rep.Findings, f)
	}
	return rep, nil
}

func convert(r result) (reportfinding.Finding, string) {
	if strings.TrimSpace(r.CheckID) == "" {
		return reportfinding.Finding{}, MissingRuleID
	}
	path, dropped := norm.Path(r.Path)
	if dropped != "" {
		return reportfinding.Finding{}, dropped
	}
	f := reportfinding.Finding{
		Tool:    Tool,
		RuleID:  norm.ClipID(r.CheckID),
		Message: norm.Clip(r.Extra.Message),
		Title:   norm.FirstLine(r.Extra.Message),
		Path:    path,
		Urgency: urgency(r.Extra.Severity),
		Snippet: norm.Clip(unlessPlaceholder(r.Extra.Lines)),
		CWE:     cweOf(r.Extra.Metadata.CWE),
	}
	if f.Title == "" {
		f.Title = f.RuleID
	}
	if r.Start.Line > 0 {
		f.Line, f.EndLine = r.Start.Line, r.Start.Line
		if r.End.Line > r.Start.Line {
			f.EndLine = r.End.Line
		}
	}
	f.Fingerprint = norm.Clip(unlessPlaceholder(strings.TrimSpace(r.Extra.Fingerprint)))
	if r.Extra.IsIgnored {
		f.Suppression = &reportfinding.Suppression{Kind: reportfinding.InSource}
	}
	f.Fix = fixOf(r, path)
	category, _ := r.Extra.Metadata.Category.(string)
	if f.CWE > 0 || strings.EqualFold(strings.TrimSpace(category), "security") {
		f.Kind = reportfinding.SAST
	} else {
		f.Kind = reportfinding.Quality
		f.Classification = norm.Maintainability
		if c, ok := norm.Classify(category); ok {
			f.Classification = c
		}
	}
	return f, ""
}

// urgency maps Semgrep's severities: ERROR high, WARNING medium, INFO low,
// and the newer CRITICAL/HIGH/MEDIUM/LOW as named; anything else medium.
func urgency(sev string) string {
	switch strings.ToUpper(strings.TrimSpace(sev)) {
	case "CRITICAL":
		return reportfinding.Critical
	case "ERROR", "HIGH":
		return reportfinding.High
	case "INFO", "LOW", "INVENTORY", "EXPERIMENT":
		return reportfinding.Low
	}
	return reportfinding.Medium
}

// cweOf reads metadata.cwe: "CWE-89: Improper ..." or a list of them; the
// first that parses.
func cweOf(raw json.RawMessage) int {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		id, _ := norm.CWE(one)
		return id
	}
	var many []any
	if json.Unmarshal(raw, &many) == nil {
		for _, v := range many {
			if s, ok := v.(string); ok {
				if id, ok := norm.CWE(s); ok {
					return id
				}
			}
		}
	}
	return 0
}

// fixExplanation is what Semgrep's own SARIF says of a rule's fix (its
// Sarif_output.ml), so a finding shows the same explanation whichever of
// Semgrep's formats reported it.
const fixExplanation = "\n Autofix: Semgrep rule suggested fix"

// fixOf is the result's fix: `fix` replaces the match, from its start to
// its end (Semgrep's columns count bytes: its positions are byte
// positions, and it applies fixes at their byte offsets); `fixed_lines`,
// when given, is the text the change must leave from the start of the
// match's first line.
func fixOf(r result, path string) *reportfinding.Fix {
	if r.Extra.Fix == nil || r.Start.Line < 1 || r.Start.Col < 1 || r.End.Line < r.Start.Line || r.End.Col < 1 {
		return nil
	}
	rep := reportfinding.Replacement{
		Path: path, Inserted: *r.Extra.Fix, Lines: strings.Join(r.Extra.FixedLines, "\n"),
		Region: reportfinding.Region{StartLine: r.Start.Line, StartColumn: r.Start.Col, EndLine: r.End.Line, EndColumn: r.End.Col,
			Unit: reportfinding.UnitBytes},
	}
	return reportfinding.KeepFix(norm.Clip(r.Extra.Message+fixExplanation), []reportfinding.Replacement{rep})
}
