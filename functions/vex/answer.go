package vex

import (
	vexdoc "github.com/acme/codescan-api/shared/vex"
)

// Bounds of an answer: the counts are always exact, the lists are cut
// (statements in document order, findings in list order), and the
// *_truncated members say so.
const (
	MaxListedStatements = 1000
	MaxListedPerStmt    = 100
	MaxListedFindings   = 2000
)

type importAnswer struct {
	Status              string          `json:"status"`
	DryRun              bool            `json:"dry_run"`
	Document            documentView    `json:"document"`
	Summary             summary         `json:"summary"`
	Statements          []statementView `json:"statements"`
	StatementsTruncated bool            `json:"statements_truncated"`
}

type documentView struct {
	ID          string `json:"id"`
	Format      string `json:"format"`
	SpecVersion string `json:"spec_version"`
	Statements  int    `json:"statements"`
}

// summary counts each matched finding once, by the statement that
// decides it: matched = changed + unchanged + skipped.
type summary struct {
	ProjectID    int64 `json:"project_id,omitempty"`
	FindingsRead int   `json:"findings_read"`
	Matched      int   `json:"matched"`
	Changed      int   `json:"changed"`
	Unchanged    int   `json:"unchanged"`
	Skipped      int   `json:"skipped"`
}

type statementView struct {
	Pointer           string              `json:"pointer"`
	Vulnerability     string              `json:"vulnerability"`
	IDs               []string            `json:"ids"`
	Status            string              `json:"status"`
	Justification     string              `json:"justification,omitempty"`
	Packages          []vexdoc.Package    `json:"packages"`
	Unresolved        []vexdoc.Unresolved `json:"unresolved"`
	Matched           int                 `json:"matched"`
	Changed           int                 `json:"changed"`
	Unchanged         int                 `json:"unchanged"`
	Skipped           int                 `json:"skipped"`
	Findings          []findingView       `json:"findings"`
	FindingsTruncated bool                `json:"findings_truncated"`
}

type findingView struct {
	ID        string      `json:"id"`
	ProjectID int64       `json:"project_id"`
	Branch    string      `json:"branch"`
	Tool      string      `json:"tool"`
	Package   packageView `json:"package"`
	From      string      `json:"from"`
	To        string      `json:"to"`
	Result    string      `json:"result"`
	Reason    string      `json:"reason,omitempty"`
	Why       string      `json:"why,omitempty"`
}

type packageView struct {
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	Version   string `json:"version"`
}

// answer is the import's answer, the same shape for a dry run (what an
// apply would change) and an apply (what changed).
func answer(req request, idx *vexdoc.Index, plan []vexdoc.Outcome, read int) importAnswer {
	doc := idx.Document()
	a := importAnswer{Status: "ok", DryRun: req.dryRun,
		Document: documentView{ID: doc.ID, Format: doc.Format, SpecVersion: doc.SpecVersion, Statements: len(doc.Statements)},
		Summary:  summary{ProjectID: req.projectID, FindingsRead: read}, Statements: []statementView{}}
	views := make([]statementView, len(doc.Statements))
	for n, st := range doc.Statements {
		views[n] = statementView{Pointer: st.Pointer, Vulnerability: st.Vulnerability, IDs: st.IDs, Status: statusOf(st),
			Justification: st.Justification, Packages: nonNil(st.Packages), Unresolved: nonNil(st.Unresolved), Findings: []findingView{}}
	}
	listed := 0
	for _, o := range plan {
		v := &views[o.Statement]
		v.Matched++
		count(&v.Changed, &v.Unchanged, &v.Skipped, o.Result)
		if !superseded(o) {
			a.Summary.Matched++
			count(&a.Summary.Changed, &a.Summary.Unchanged, &a.Summary.Skipped, o.Result)
		}
		if len(v.Findings) >= MaxListedPerStmt || listed >= MaxListedFindings || o.Statement >= MaxListedStatements {
			v.FindingsTruncated = true
			continue
		}
		v.Findings = append(v.Findings, viewOf(o))
		listed++
	}
	a.Statements = views[:min(len(views), MaxListedStatements)]
	a.StatementsTruncated = len(views) > MaxListedStatements
	return a
}

// superseded reports whether o is a statement another one overrules for
// its finding (counted under its statement, not in the summary).
func superseded(o vexdoc.Outcome) bool { return o.Superseded }

func count(changed, unchanged, skipped *int, result string) {
	switch result {
	case vexdoc.Changed:
		*changed++
	case vexdoc.Unchanged:
		*unchanged++
	default:
		*skipped++
	}
}

func viewOf(o vexdoc.Outcome) findingView {
	f := o.Finding
	return findingView{ID: f.ID, ProjectID: f.ProjectID, Branch: f.Branch, Tool: f.Tool,
		Package: packageView{Ecosystem: f.Ecosystem, Name: f.Name, Version: f.Version},
		From:    f.Status, To: o.To, Result: o.Result, Reason: reasonOf(o), Why: o.Why}
}

// reasonOf is the reason a change gives (none for a finding left as it
// is: its own reason is not repeated).
func reasonOf(o vexdoc.Outcome) string {
	if o.Result != vexdoc.Changed {
		return ""
	}
	return o.Reason
}

// statusOf is the statement's status; a CycloneDX vulnerability without
// an analysis has none.
func statusOf(st vexdoc.Statement) string {
	if st.Status == "" {
		return "none"
	}
	return st.Status
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
