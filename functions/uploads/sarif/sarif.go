// Package sarif turns a SARIF 2.1.0 report (what Semgrep, CodeQL, gosec,
// Bandit and most scanners emit) into SAST findings: one per result, with
// its CWE, file, line and urgency. Decoding is the go-sarif library's; this
// package checks what makes a document a SARIF report at all and interprets
// the parts scanners use differently (where a CWE is written, where a file
// path is rooted).
package sarif

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	gosarif "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// Version is the only SARIF version accepted.
const Version = "2.1.0"

// Report is what an upload keeps of a SARIF log.
type Report struct {
	Findings []Finding
	// Branch and RepositoryURI come from the first run's
	// versionControlProvenance that gives them (as written there), for
	// uploads that do not name them.
	Branch        string
	RepositoryURI string
	// Tools are the runs' driver names, in run order, each once.
	Tools []string
}

// Finding is one result of a report.
type Finding struct {
	Run, Result int    // position in the report: run index, result index in the run
	Tool        string // the run's tool (driver) name
	RuleID      string
	Title       string // the rule's short description or name, else the result's message
	CWE         int    // 0 when the report names no CWE for the result
	Path        string
	Line        int // 0 when the report gives none
	Urgency     string
}

// Urgency codes.
const (
	Critical = "CR"
	High     = "HI"
	Medium   = "ME"
	Low      = "LO"
)

// maxText bounds the title and message kept per finding, so a verbose
// scanner cannot push an issue item towards DynamoDB's 400 KB limit.
const maxText = 2000

// Error is a document that is not a valid SARIF 2.1.0 report. Its message
// names the problem and is meant for the uploader.
type Error struct{ msg string }

func (e *Error) Error() string { return "invalid SARIF report: " + e.msg }

// Problem is the error's message without the prefix.
func (e *Error) Problem() string { return e.msg }

func invalid(format string, args ...any) error { return &Error{msg: fmt.Sprintf(format, args...)} }

// Parse reads a report and returns its findings in report order. Results
// whose kind says they are not a problem (`pass`, `notApplicable`,
// `informational`) are skipped.
func Parse(data []byte) (Report, error) {
	if err := checkShape(data); err != nil {
		return Report{}, err
	}
	// Decoded into the runs rather than through gosarif.FromBytes: its
	// Report type drags in a JSON-schema validator whose text/template use
	// keeps every method of the AWS SDK in the binary (+5 MB).
	var log struct {
		Runs []*gosarif.Run `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		return Report{}, decodeError(err)
	}
	var rep Report
	for i, r := range log.Runs {
		if r == nil || r.Tool == nil || r.Tool.Driver == nil || str(r.Tool.Driver.Name) == "" {
			return Report{}, invalid("runs[%d].tool.driver.name is missing", i)
		}
		if name := str(r.Tool.Driver.Name); !slices.Contains(rep.Tools, name) {
			rep.Tools = append(rep.Tools, name)
		}
		rc := newRunContext(r)
		for j, res := range r.Results {
			if res == nil || res.Message == nil || (str(res.Message.Text) == "" && str(res.Message.ID) == "") {
				return Report{}, invalid("runs[%d].results[%d].message is missing", i, j)
			}
			switch res.Kind {
			case "pass", "notApplicable", "informational":
				continue
			}
			rep.Findings = append(rep.Findings, rc.finding(i, j, res))
		}
		for _, vc := range r.VersionControlProvenance {
			if vc == nil {
				continue
			}
			if rep.Branch == "" {
				rep.Branch = strings.TrimPrefix(str(vc.Branch), "refs/heads/")
			}
			if rep.RepositoryURI == "" {
				rep.RepositoryURI = str(vc.RepositoryURI)
			}
		}
	}
	return rep, nil
}

// checkShape rejects what is not a SARIF 2.1.0 log before the library sees
// it: the library accepts any JSON object (a missing version or runs member
// decodes to zero values).
func checkShape(data []byte) error {
	if len(strings.TrimSpace(string(data))) == 0 {
		return invalid("the body is empty")
	}
	if !utf8.Valid(data) {
		return invalid("the body is not UTF-8 text")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return invalid("not valid JSON (%s at byte %d)", se.Error(), se.Offset)
		}
		return invalid("the top level must be a JSON object")
	}
	if top == nil {
		return invalid("the top level must be a JSON object")
	}
	rawVersion, ok := top["version"]
	if !ok {
		return invalid(`missing "version" (expected %q)`, Version)
	}
	var version string
	if err := json.Unmarshal(rawVersion, &version); err != nil {
		return invalid(`"version" must be a string (expected %q)`, Version)
	}
	if version != Version {
		return invalid("unsupported version %q (only %s is supported)", version, Version)
	}
	rawRuns, ok := top["runs"]
	if !ok {
		return invalid(`missing "runs"`)
	}
	if trimmed := strings.TrimSpace(string(rawRuns)); !strings.HasPrefix(trimmed, "[") {
		return invalid(`"runs" must be an array`)
	}
	return nil
}

// decodeError names the member whose type the library could not decode.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return invalid("%q has the wrong type (a JSON %s)", te.Field, te.Value)
	}
	return invalid("%s", strings.TrimPrefix(err.Error(), "json: "))
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// clip shortens s to at most maxText bytes on a rune boundary.
func clip(s string) string {
	if len(s) <= maxText {
		return s
	}
	cut := maxText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
