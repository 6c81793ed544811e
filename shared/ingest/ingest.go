// Package ingest turns a parsed report into the issues of a scan: the
// identity of each finding (its fingerprint) and the issue the store's
// lifecycle applies. Uploads and the ingestion worker share it.
package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/finding"
	"github.com/acme/codescan-api/shared/store"
)

// Tool names the scanner of a report for identity: its tools sorted and
// joined with "+" (a SARIF file holding two tools' runs is one tool of its
// own), else the upload's engine.
func Tool(rep finding.Report, engine string) string {
	tools := slices.Clone(rep.Tools)
	slices.Sort(tools)
	tools = slices.Compact(tools)
	if len(tools) == 0 {
		return engine
	}
	return strings.Join(tools, "+")
}

// Fingerprints gives every finding its identity inside its tool and
// branch, in report order:
//
//  1. the report's own stable fingerprint when it has one ("r:" + it);
//  2. else a hash of the rule id, the file and the flagged code (the
//     snippet, whitespace-collapsed), or, without code, the result's
//     message, or its title ("c:"): it survives lines moving and
//     unrelated edits;
//  3. else, with nothing but a position, the rule, file and line ("l:").
//
// Findings of one report with the same fingerprint are told apart by their
// order: the second gets "#2", the third "#3", as GitHub code scanning does.
func Fingerprints(fs []finding.Finding) []string {
	out := make([]string, len(fs))
	seen := map[string]int{}
	for n, f := range fs {
		fp := base(f)
		seen[fp]++
		if k := seen[fp]; k > 1 {
			fp = fmt.Sprintf("%s#%d", fp, k)
		}
		out[n] = fp
	}
	return out
}

func base(f finding.Finding) string {
	if fp := strings.TrimSpace(f.Fingerprint); fp != "" {
		return "r:" + fp
	}
	for _, content := range []string{f.Snippet, f.Message, f.Title} {
		if c := strings.Join(strings.Fields(content), " "); c != "" {
			return "c:" + digest(f.RuleID, f.Path, c)
		}
	}
	return "l:" + digest(f.RuleID, f.Path, fmt.Sprint(f.Line))
}

func digest(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// NoPath is the file path of a finding that names no file (issues are
// grouped by file, so every issue has one).
const NoPath = "(no location)"

// Issues are the scan's issues for the SAST findings of a report, in
// report order, with their identities; first detection is the scan's
// creation.
func Issues(companyID int64, sc store.Scan, proj store.Project, fs []finding.Finding) []store.Issue {
	var sast []finding.Finding
	for _, f := range fs {
		if f.Kind == finding.SAST || f.Kind == "" {
			sast = append(sast, f)
		}
	}
	fps := Fingerprints(sast)
	out := make([]store.Issue, len(sast))
	for n, f := range sast {
		path := f.Path
		if path == "" {
			path = NoPath
		}
		out[n] = store.Issue{
			ID:        store.IssueID(companyID, proj.ID, sc.Branch, sc.Tool, fps[n]),
			ProjectID: proj.ID, ProjectName: proj.Name, Branch: sc.Branch, Tool: sc.Tool, Fingerprint: fps[n],
			CWE: f.CWE, FilePath: path, Line: f.Line, Urgency: f.Urgency, RuleID: f.RuleID,
			Title: f.Title, Message: f.Message, Snippet: f.Snippet, CreatedAt: sc.CreatedAt,
		}
	}
	return out
}
