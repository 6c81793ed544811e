// Package reports reads the scanner reports an upload names by its engine
// into the common finding form. Each format has its own package (sarif,
// semgrep, govulncheck, osv, cyclonedx, spdx); this one picks it, and its two
// errors tell the upload what to answer: InvalidError (400) and
// TooLargeError (413), plus UnknownEngineError (400) for an engine it does
// not read.
package reports

import (
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/cyclonedx"
	"github.com/acme/codescan-api/shared/reports/govulncheck"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/reports/osv"
	"github.com/acme/codescan-api/shared/reports/reporterr"
	"github.com/acme/codescan-api/shared/reports/sarif"
	"github.com/acme/codescan-api/shared/reports/semgrep"
	"github.com/acme/codescan-api/shared/reports/spdx"
)

// InvalidError is a report its format cannot read; Problem says why.
type InvalidError = reporterr.Invalid

// TooLargeError is a report past a limit (25,000 results per run, 20 runs).
type TooLargeError = reporterr.TooLarge

// Engine names.
const (
	SARIF       = "sarif"
	Semgrep     = "semgrep"
	Govulncheck = "govulncheck"
	OSVScanner  = "osv-scanner"
	CycloneDX   = "cyclonedx"
	// SPDX is an SBOM (SPDX 2.x JSON): components only, no findings.
	SPDX = "spdx"
)

var parsers = map[string]func([]byte) (reportfinding.Report, error){
	SARIF:       parseSARIF,
	Semgrep:     parseSemgrep,
	Govulncheck: govulncheck.Parse,
	OSVScanner:  osv.Parse,
	CycloneDX:   cyclonedx.Parse,
	SPDX:        spdx.Parse,
}

// aliases are engine names the real client sends for a format read here:
// `codeql` (CodeQL writes SARIF) and `snyk` (Snyk Code's --json output is
// SARIF).
var aliases = map[string]string{"codeql": SARIF, "snyk": SARIF}

// Engines lists the engine names Parse accepts, canonical ones first.
func Engines() []string {
	return []string{SARIF, Semgrep, Govulncheck, OSVScanner, CycloneDX, SPDX, "codeql", "snyk"}
}

// UnknownEngineError is an engine name Parse does not read.
type UnknownEngineError struct{ Engine string }

func (e *UnknownEngineError) Error() string {
	return fmt.Sprintf("unsupported engine %q (supported engines: %s)", e.Engine, strings.Join(Engines(), ", "))
}

// Canonical returns the format an engine name (any case) reads, or false.
func Canonical(engine string) (string, bool) {
	e := strings.ToLower(strings.TrimSpace(engine))
	if a, ok := aliases[e]; ok {
		return a, true
	}
	_, ok := parsers[e]
	return e, ok
}

// Parse reads data as the engine's report. It is the one way into
// storage for report text (the upload checks a report with it, the
// ingester writes what it returns): every text of the report comes out
// following the edge's text rule (norm.Text), whatever the format.
func Parse(engine string, data []byte) (reportfinding.Report, error) {
	e, ok := Canonical(engine)
	if !ok {
		return reportfinding.Report{}, &UnknownEngineError{Engine: engine}
	}
	rep, err := parsers[e](data)
	if err != nil {
		return reportfinding.Report{}, err
	}
	norm.Text(&rep)
	return rep, nil
}

// parseSARIF reads any producer's SARIF; govulncheck's SARIF holds SCA
// findings, not results of rules, and goes to its own reader.
func parseSARIF(data []byte) (reportfinding.Report, error) {
	log, err := sarif.Decode(data)
	if err != nil {
		return reportfinding.Report{}, err
	}
	if govulncheck.IsGovulncheckSARIF(log) {
		return govulncheck.FromSARIF(log), nil
	}
	return sarif.Findings(log), nil
}

// parseSemgrep reads Semgrep's JSON, or its SARIF (`semgrep --sarif`)
// uploaded under the same engine name.
func parseSemgrep(data []byte) (reportfinding.Report, error) {
	if sarif.IsLog(data) {
		return parseSARIF(data)
	}
	return semgrep.Parse(data)
}
