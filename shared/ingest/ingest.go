// Package ingest turns a parsed report into the issues of a scan: the
// identity of each finding (its fingerprint) and the issue the store's
// lifecycle applies. Uploads and the ingestion worker share it.
package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/sariflog"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/quality"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Tool names the scanner of a report for identity: its tools sorted and
// joined with "+" (a SARIF file holding two tools' runs is one tool of its
// own), else the upload's engine.
func Tool(rep reportfinding.Report, engine string) string {
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
//     report's snippet, or the flagged lines of the file the run uploaded,
//     see Sources; whitespace-collapsed, suppression comments left out),
//     or, without code, the result's message, or its title ("c:"): it
//     survives lines moving, unrelated edits and a suppression comment
//     added or removed;
//  3. else, with nothing but a position, the rule, file and line ("l:").
//
// Findings of one report with the same fingerprint are told apart by their
// order: the second gets "#2", the third "#3", as GitHub code scanning does.
func Fingerprints(fs []reportfinding.Finding) []string {
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

func base(f reportfinding.Finding) string {
	if fp := strings.TrimSpace(f.Fingerprint); fp != "" {
		// This service's own SARIF reports carry the issue's fingerprint
		// under sariflog.FingerprintKey: uploaded again, it is the same issue.
		if own, ok := strings.CutPrefix(fp, sariflog.FingerprintKey+":"); ok {
			return own
		}
		return "r:" + fp
	}
	for _, content := range []string{withoutSuppressions(f.Path, f.Snippet), f.Message, f.Title} {
		if c := strings.Join(strings.Fields(content), " "); c != "" {
			return "c:" + digest(f.RuleID, f.Path, c)
		}
	}
	return "l:" + digest(f.RuleID, f.Path, fmt.Sprint(f.Line))
}

// suppressionMarkers start the comments by which tools suppress a finding
// on its line (gosec, Semgrep, staticcheck, golangci-lint, clang-tidy).
var suppressionMarkers = []string{"#nosec", "nosemgrep", "lint:ignore", "nolint", "NOLINT"}

// withoutSuppressions is the code of a file without the comments
// that suppress its finding, so that adding or removing one keeps the
// finding's identity: gosec's SARIF has no fingerprints and its snippet is
// the line as written. A line is cut where the comment holding its first
// marker opens: at the nearest opener of the file's language before the
// marker (at the marker when there is none).
func withoutSuppressions(file, code string) string {
	openers := commentOpeners(file)
	lines := strings.Split(code, "\n")
	for n, line := range lines {
		at := -1
		for _, m := range suppressionMarkers {
			if k := strings.Index(line, m); k >= 0 && (at < 0 || k < at) {
				at = k
			}
		}
		if at < 0 {
			continue
		}
		cut := at
		for _, o := range openers {
			if k := strings.LastIndex(line[:at], o); k >= 0 {
				cut = k
				break
			}
		}
		lines[n] = line[:cut]
	}
	return strings.Join(lines, "\n")
}

// commentOpeners are the line-comment openers of a file's language, the
// likeliest first: "#" for scripting and configuration languages, "--"
// for SQL and Lua, "//" and "/*" for the C family (the default).
func commentOpeners(file string) []string {
	switch strings.ToLower(path.Ext(file)) {
	case ".py", ".rb", ".sh", ".bash", ".pl", ".r", ".yaml", ".yml", ".toml", ".tf", ".cmake", ".ps1", ".ex", ".exs":
		return []string{"#"}
	case ".sql", ".lua", ".hs":
		return []string{"--"}
	case ".php":
		return []string{"//", "#", "/*"}
	}
	return []string{"//", "/*"}
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
func Issues(companyID int64, sc scans.Scan, proj schema.Project, fs []reportfinding.Finding) []findings.Issue {
	var sast []reportfinding.Finding
	for _, f := range fs {
		if f.Kind == reportfinding.SAST || f.Kind == "" {
			sast = append(sast, f)
		}
	}
	fps, others := Fingerprints(sast), []string(nil)
	if slices.ContainsFunc(sast, func(f reportfinding.Finding) bool { return f.SnippetFromSource }) {
		others = Fingerprints(withoutSource(sast))
	}
	out := make([]findings.Issue, len(sast))
	for n, f := range sast {
		path := f.Path
		if path == "" {
			path = NoPath
		}
		out[n] = findings.Issue{
			ID:        findings.IssueID(companyID, proj.ID, sc.Branch, sc.Tool, fps[n]),
			ProjectID: proj.ID, ProjectName: proj.Name, Branch: sc.Branch, Tool: sc.Tool, Fingerprint: fps[n],
			CWE: f.CWE, FilePath: path, Line: f.Line, Urgency: f.Urgency, RuleID: f.RuleID,
			Title: f.Title, Message: f.Message, Snippet: f.Snippet, CodeStart: f.CodeStart, Code: f.Code, CreatedAt: sc.CreatedAt,
		}
		if others != nil && others[n] != fps[n] {
			out[n].Alias = findings.IssueID(companyID, proj.ID, sc.Branch, sc.Tool, others[n])
		}
		if f.Suppression != nil { // the code suppresses it: see store's suppressed.go
			out[n].Status, out[n].Reason = findings.Suppressed, f.Suppression.Justification
		}
		if x := f.Fix; x != nil && x.Diff != "" { // applied to the uploaded file: see Sources
			out[n].Fix = &findings.Fix{Diff: x.Diff, Explanation: x.Explanation, FullCode: x.FullCode}
		}
	}
	return out
}

// withoutSource is fs as a run that sent no source files reports them:
// identified by message where the code came from an uploaded file. Their
// fingerprints are each issue's other identity (store's findings/aliases.go),
// so runs with and without the files keep one issue per finding.
func withoutSource(fs []reportfinding.Finding) []reportfinding.Finding {
	out := slices.Clone(fs)
	for n := range out {
		if out[n].SnippetFromSource {
			out[n].Snippet, out[n].SnippetFromSource = "", false
		}
	}
	return out
}

// ofKind keeps the findings of one kind.
func ofKind(fs []reportfinding.Finding, k reportfinding.Kind) []reportfinding.Finding {
	var out []reportfinding.Finding
	for _, f := range fs {
		if f.Kind == k {
			out = append(out, f)
		}
	}
	return out
}

// Quality are the scan's code quality findings of a report, classified by
// their rule's class; first detection is the scan's time.
func Quality(companyID int64, sc scans.Scan, proj schema.Project, fs []reportfinding.Finding) []quality.Issue {
	qs := ofKind(fs, reportfinding.Quality)
	fps := Fingerprints(qs)
	out := make([]quality.Issue, len(qs))
	for n, f := range qs {
		class := f.Classification
		if class == "" {
			class = "Maintainability"
		}
		line := max(f.Line, 0)
		out[n] = quality.Issue{
			ID:        findings.IssueID(companyID, proj.ID, sc.Branch, sc.Tool, "q:"+fps[n]),
			ProjectID: proj.ID, ScanID: sc.ID,
			Classification: quality.Classification{ID: f.RuleID, Name: class, Description: firstOf(f.Title, f.Message)},
			Urgency:        f.Urgency, CreatedAt: sc.CreatedAt, FirstDetectionDate: sc.CreatedAt, Status: "open",
			SLAStatus: "on_track",
			Location: quality.Location{
				File:       quality.File{Name: path.Base(f.Path), Language: Language(f.Path), Path: f.Path},
				Project:    quality.Project{Name: proj.Name, Branch: sc.Branch, GitSHA: sc.GitSHA},
				LineNumber: line, SinkLineNumber: max(f.EndLine, line),
			},
			AutoTriage: quality.AutoTriage{FalsePositiveDetection: quality.FalsePositiveDetection{Status: "not_started"}},
		}
	}
	return out
}

// SCA are the scan's SCA findings of a report: one per advisory, package
// and version, with the scanner's reachability and the advisory's ids and
// aliases (IDs). Their ids here are the tool's; the store correlates them
// with other scanners' reports of the same vulnerability (store/sca
// correlate.go: one finding, its sources).
func SCA(companyID int64, sc scans.Scan, proj schema.Project, fs []reportfinding.Finding) []sca.Issue {
	var out []sca.Issue
	for _, f := range ofKind(fs, reportfinding.SCA) {
		d := f.SCA
		if d == nil {
			continue
		}
		primary := firstOf(append(slices.Clone(d.IDs), f.RuleID)...)
		i := sca.Issue{
			ID:        findings.IssueID(companyID, proj.ID, sc.Branch, sc.Tool, "sca:"+primary+"|"+d.Ecosystem+"|"+d.Name+"@"+d.Version),
			ProjectID: proj.ID, Branch: sc.Branch, Tool: sc.Tool, IDs: d.IDs,
			Description: firstOf(d.Summary, f.Title, primary), Details: firstOf(d.Details, f.Message),
			Severity: d.Severity, CVSSScore: d.CVSS, Classification: primary, CVE: d.CVE, CWE: f.CWE,
			Package:  sca.Package{Name: d.Name, Version: d.Version, Ecosystem: d.Ecosystem, FixVersion: d.FixVersion},
			Location: sca.Location{Path: firstOf(d.Manifest, f.Path)},
			Reachability: sca.Reachability{Status: d.Reachability.Status, IsReachable: d.Reachability.Status == reportfinding.Reachable,
				Description: reachabilityText[d.Reachability.Status], Usages: []sca.Usage{}},
		}
		for _, u := range d.Reachability.Usages {
			i.Reachability.Usages = append(i.Reachability.Usages, sca.Usage{
				ID:       findings.IssueID(companyID, proj.ID, sc.Branch, sc.Tool, fmt.Sprintf("usage:%s|%s:%d|%s", i.ID, u.File, u.Line, u.Function)),
				Filename: u.File, CodeLine: fmt.Sprintf("%s:%d %s", u.File, u.Line, u.Function),
				IsFunctionReachable: fmt.Sprint(u.Reachable), Reasoning: u.Path,
			})
		}
		out = append(out, i)
	}
	return out
}

// reachabilityText explains each reachability status.
var reachabilityText = map[string]string{
	reportfinding.Reachable:       "A call path from the project's code reaches the vulnerable function.",
	reportfinding.PackageImported: "The vulnerable package is imported, but no call path reaches the vulnerable function.",
	reportfinding.ModuleRequired:  "The module is required, but the vulnerable package is not imported.",
	reportfinding.NotAnalyzed:     "The scanner does not analyse reachability.",
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// languages names the language of a file by its extension (the client's
// location.file.language).
var languages = map[string]string{
	".go": "go", ".py": "python", ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript",
	".ts": "typescript", ".tsx": "typescript", ".java": "java", ".kt": "kotlin", ".rb": "ruby",
	".php": "php", ".cs": "csharp", ".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp", ".hpp": "cpp",
	".rs": "rust", ".swift": "swift", ".scala": "scala", ".sh": "shell", ".yaml": "yaml", ".yml": "yaml",
	".tf": "terraform", ".sql": "sql", ".html": "html", ".vue": "vue", ".dart": "dart",
}

// Language is the language of a file by its extension, "unknown" when
// the extension says nothing.
func Language(p string) string {
	if l, ok := languages[strings.ToLower(path.Ext(p))]; ok {
		return l
	}
	return "unknown"
}
