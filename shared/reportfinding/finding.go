// Package reportfinding is the common form every report parser (SARIF, Semgrep,
// govulncheck, OSV-Scanner, CycloneDX) turns its input into, and the one
// form ingestion reads. A parser fills what its format says and leaves the
// rest zero; ingestion decides identity, lifecycle and storage.
package reportfinding

// Kind says which issue list a finding belongs to.
type Kind string

const (
	// SAST findings carry a security classification (a CWE, a security
	// severity or a security tag); they are counted in the groups.
	SAST Kind = "sast"
	// Quality findings come from rules without a security classification
	// (linters, quality queries).
	Quality Kind = "quality"
	// SCA findings are vulnerable dependencies.
	SCA Kind = "sca"
)

// Urgency codes, most urgent first.
const (
	Critical = "CR"
	High     = "HI"
	Medium   = "ME"
	Low      = "LO"
)

// Finding is one result of a report. Each of its texts is listed in
// Report.MapText (text.go), which cleans them before they are stored.
type Finding struct {
	Kind Kind
	// Tool is the scanner that reported it (a SARIF run's driver name,
	// "semgrep", "govulncheck", ...): identity is per tool.
	Tool   string
	RuleID string
	// Title is the rule's short description or name, Message the result's
	// own text (either may be empty).
	Title   string
	Message string
	CWE     int // 0 when the report names none
	// Path is repo-relative with forward slashes, "" when the report gives
	// no file; Line and EndLine are 1-based, 0 when unknown.
	Path    string
	Line    int
	EndLine int
	Urgency string // one of the urgency codes
	// Fingerprint is the report's own stable identity of the result (SARIF
	// partialFingerprints/fingerprints, Semgrep's fingerprint), "" when it
	// has none; Snippet the flagged source text when the report carries it.
	Fingerprint string
	Snippet     string
	// SnippetFromSource says Snippet was cut from the file the run
	// uploaded, not carried by the report: the finding's identity then has
	// a second form, the one a run without the file gives it.
	SnippetFromSource bool
	// Code is the source around the flagged lines when the run uploaded
	// the file (POST /code-upload), CodeStart the 1-based number of its
	// first line.
	CodeStart int
	Code      string
	// Classification names a quality finding's class (Maintainability,
	// Reliability, Style, ...).
	Classification string
	// SCA holds the dependency of an SCA finding.
	SCA *Dependency
	// Suppression is set when the code suppresses the finding (a
	// `nosemgrep`, `#nosec` or `//lint:ignore` comment the scanner
	// honoured), nil otherwise.
	Suppression *Suppression
	// Fix is the change the scanner proposes for the finding (fix.go), nil
	// when its report proposes none.
	Fix *Fix
}

// InSource is the kind of a suppression written in the scanned code
// (SARIF's `inSource`); the only kind a parser records.
const InSource = "inSource"

// Suppression is a suppression of a finding in the scanned code. Parsers
// record only the suppressions that hold: SARIF's of kind `inSource`
// whose status is `accepted` or absent, and Semgrep's ignored results.
type Suppression struct {
	Kind string // InSource
	// Justification is the reason written with the suppression, "" when
	// the tool records none.
	Justification string
}

// Dependency is the vulnerable package of an SCA finding.
type Dependency struct {
	Name       string
	Version    string
	Ecosystem  string // Go, npm, PyPI, Maven, ... as OSV names them
	FixVersion string // "" when no fixed version is known
	// IDs are the advisory ids, the primary (OSV/GHSA/GO-…) first;
	// CVE is the first CVE among them.
	IDs      []string
	CVE      string
	Severity string  // CRITICAL, HIGH, MEDIUM, LOW or UNSPECIFIED
	CVSS     float64 // 0 when unknown
	Summary  string
	Details  string
	// Manifest is the repo-relative path of the file declaring the
	// dependency (go.mod, package-lock.json, ...).
	Manifest     string
	Reachability Reachability
}

// Reachability statuses.
const (
	// Reachable: a call path from the project's code reaches the vulnerable
	// function (govulncheck symbol level).
	Reachable = "reachable"
	// PackageImported: the vulnerable package is imported, no call path
	// reaches the vulnerable symbol.
	PackageImported = "package_imported"
	// ModuleRequired: the module is required, the vulnerable package is not
	// imported.
	ModuleRequired = "module_required"
	// NotAnalyzed: the scanner does not analyse reachability (OSV-Scanner,
	// CycloneDX).
	NotAnalyzed = "not_analyzed"
)

// Reachability is what the scanner found about calls into the vulnerable
// code.
type Reachability struct {
	Status string // one of the statuses above
	Usages []Usage
}

// Usage is one call path's entry point in the project's code.
type Usage struct {
	File      string
	Line      int
	Function  string
	Reachable bool
	// Path is the call path, entry first, as the scanner printed it.
	Path string
}

// Report is a parsed report: its findings in report order and what it
// says of the code it scanned (for uploads that do not name it).
type Report struct {
	Findings []Finding
	// Tools names the scanners of the report (SARIF runs' drivers), each
	// once, also when they found nothing: identity is per tool.
	Tools         []string
	Branch        string
	RepositoryURI string
	CommitSHA     string
	// Category is the analysis category the report names (SARIF
	// runAutomationDetails.id up to its last "/"), "" when none.
	Category string
	// Dropped counts results that were not stored, by reason (absolute path,
	// path escaping the repository, no rule id).
	Dropped map[string]int
}
