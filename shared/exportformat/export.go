// Package exportformat writes findings exports as streams: CSV, JSON Lines,
// SARIF 2.1.0 and CycloneDX VEX. A writer pulls rows one at a time from a
// Source and writes each as it comes, so an export of a million findings
// runs in memory that does not grow with the rows (SARIF keeps its runs'
// distinct rules, VEX its distinct packages).
//
// # CSV
//
// A header, then one row per finding (RFC 4180 via encoding/csv). Any cell
// that starts with = + - @, their full-width forms ＝ ＋ － ＠ (U+FF1D,
// U+FF0B, U+FF0D, U+FF20, which spreadsheets in East Asian locales read as
// the ASCII ones), a tab, a carriage return, a line feed, a space or a
// double quote is prefixed with a single quote, so a spreadsheet shows it
// as text instead of running it as a formula (CSV injection): a spreadsheet
// skips leading white space before reading a formula, and a leading quote
// mark can close a quoted field early in readers that split lines
// themselves.
//
// # Text
//
// Every format writes text as the API answers it: each text of a row
// follows the edge's rule (cleantext.Visible; a title and a status reason
// keep their newlines and tabs), so no control character (C0, DEL, C1) or
// bidi embedding, override or isolate reaches a file, whatever the stored
// row holds. Ingestion stores report text so already; an issue stored
// before that rule, or a feed's value, is written out here.
//
// # SARIF
//
// One run per tool, in the order the tools first appear. The source is
// read once per tool (each pass writes one tool's results), so it must give
// the same rows each time it is called, as a query does.
//
// # VEX
//
// A CycloneDX 1.6 document of the findings that name a package: one
// vulnerability per finding (its id the finding's first CVE, else its first
// advisory id, the other ids as references), affecting the package's
// component (bom-ref its package URL). The analysis comes from the
// finding's triage status:
//
//	status           state           justification        response      detail
//	open             in_triage       -                    -             status reason
//	fix_in_progress  exploitable     -                    update        status reason
//	accepted_risk    exploitable     -                    will_not_fix  status reason
//	fixed            resolved        -                    -             status reason
//	false_positive   false_positive  -                    -             status reason
//	suppressed       not_affected    code_not_reachable   -             status reason
//	                                 (only when the reachability analysis
//	                                 found the vulnerable code unreachable)
//	duplicate        (not written)
//
// Why: an accepted risk is an acknowledged, exploitable vulnerability that
// will not be fixed; a fix in progress is exploitable until the update
// lands. false_positive says the advisory does not apply to this package at
// all, which is what a triager's "false positive" means; CycloneDX allows a
// justification only to explain not_affected, so none is given. A
// suppression in the code asserts that this occurrence does not affect the
// project: not_affected, with the suppression's reason as the impact
// statement (detail) and a justification only when evidence (reachability)
// supports one, never guessed. A duplicate repeats another finding of the
// same vulnerability and package whose analysis the document already
// carries; writing it again would state the same pair twice, possibly with a
// stale analysis. First seen and last seen become the analysis'
// firstIssued and lastUpdated; KEV and EPSS values become properties.
package exportformat

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/acme/codescan-api/shared/exploitfeed"
)

// Row is one finding as exports show it: a SAST issue, or an SCA issue
// when Package is set.
type Row struct {
	ID           string
	Project      string
	Branch       string
	Tool         string
	Rule         string
	Title        string
	CWE          int // 0: none
	Path         string
	Line         int // 0: none
	Urgency      string
	Status       string
	StatusReason string
	Fingerprint  string
	FirstSeen    time.Time
	LastSeen     time.Time

	// SCA findings.
	Package      string
	Ecosystem    string // OSV's ecosystem names: Go, npm, PyPI, Maven, ...
	Version      string
	FixedVersion string
	Advisories   []string // CVE, GHSA, OSV ids
	Reachable    *bool    // nil: not analysed

	// Exploit is nil when the finding was never enriched.
	Exploit *Exploit
}

// Exploit is what the feeds say about a finding's CVE: KEV nil when it is
// not in the catalogue, EPSS nil when it has no score.
type Exploit struct {
	KEV  *exploitfeed.KEV
	EPSS *exploitfeed.EPSS
}

// Source yields the rows of an export in order, stopping at the first
// error yield returns (and returning it).
type Source func(yield func(Row) error) error

// Format is an export format.
type Format string

// The formats.
const (
	CSV       Format = "csv"
	JSONLines Format = "jsonl"
	SARIF     Format = "sarif"
	VEX       Format = "vex"
)

// Formats are the formats in the order the API lists them.
var Formats = []Format{CSV, JSONLines, SARIF, VEX}

// ContentType is the media type of an export's object.
func (f Format) ContentType() string {
	switch f {
	case CSV:
		return "text/csv; charset=utf-8"
	case JSONLines:
		return "application/jsonl"
	case SARIF:
		return "application/sarif+json"
	case VEX:
		return "application/vnd.cyclonedx+json"
	}
	return "application/octet-stream"
}

// Extension is an export file's name extension.
func (f Format) Extension() string {
	switch f {
	case CSV:
		return ".csv"
	case JSONLines:
		return ".jsonl"
	case SARIF:
		return ".sarif"
	case VEX:
		return ".cdx.json"
	}
	return ""
}

// Options are what a document names besides its rows.
type Options struct {
	// Project names the VEX document's subject.
	Project string
	// Time stamps the VEX document (now when zero).
	Time time.Time
	// Serial is the VEX document's uuid (a random one when empty).
	Serial string
}

// Write writes src to w in format f and returns the number of findings
// written.
func Write(w io.Writer, f Format, src Source, opt Options) (int, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	src = visibleSource(src)
	var n int
	var err error
	switch f {
	case CSV:
		n, err = writeCSV(bw, src)
	case JSONLines:
		n, err = writeJSONLines(bw, src)
	case SARIF:
		n, err = writeSARIF(bw, src)
	case VEX:
		n, err = writeVEX(bw, src, opt)
	default:
		return 0, fmt.Errorf("export: unknown format %q", f)
	}
	if err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// cweID is a finding's CWE id ("" without one).
func cweID(r Row) string {
	if r.CWE <= 0 {
		return ""
	}
	return fmt.Sprintf("CWE-%d", r.CWE)
}

// stamp is a time in RFC 3339 UTC ("" when zero).
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// title names a finding: its title, else its rule.
func title(r Row) string { return cmp.Or(r.Title, r.Rule, "Finding") }

// uriRef is a relative path as a URI reference (percent-encoded; a colon
// in the first segment is kept from reading as a scheme).
func uriRef(path string) string { return (&url.URL{Path: path}).String() }
