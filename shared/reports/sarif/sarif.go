// Package sarif turns a SARIF 2.1.0 report (what CodeQL, Semgrep, gosec,
// staticcheck, ESLint and most scanners emit) into findings, one per
// result. Results with a security classification (a CWE, a
// security-severity, a `security` tag) are SAST findings; the others are
// code quality findings classified from their rule. Decoding is the
// go-sarif library's; this package checks what makes a document a SARIF
// report at all and interprets the parts scanners use differently (where a
// CWE is written, where a file path is rooted).
package sarif

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	gosarif "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/acme/codescan-api/shared/jsonerr"
	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

// Version is the only SARIF version accepted.
const Version = "2.1.0"

// Limits of one report, GitHub code scanning's.
const (
	MaxRuns          = 20
	MaxResultsPerRun = 25_000
)

// MissingRuleID is the Dropped reason of a result whose rule cannot be
// named (no ruleId, rule.id or rule index that resolves).
const MissingRuleID = "missing_rule_id"

const format = "SARIF"

func invalid(problem string, args ...any) error { return reporterr.Invalidf(format, problem, args...) }

// Log is a decoded SARIF log: its runs as the library reads them. Other
// parsers of SARIF dialects (govulncheck's) start from it.
type Log struct {
	Runs []*gosarif.Run `json:"runs"`
}

// Decode checks that data is a SARIF 2.1.0 log within the limits and
// decodes it.
func Decode(data []byte) (*Log, error) {
	if err := checkShape(data); err != nil {
		return nil, err
	}
	// Decoded into the runs rather than through gosarif.FromBytes: its
	// Report type drags in a JSON-schema validator whose text/template use
	// keeps every method of the AWS SDK in the binary (+5 MB).
	var log Log
	if err := json.Unmarshal(data, &log); err != nil {
		return nil, decodeError(err)
	}
	if len(log.Runs) > MaxRuns {
		return nil, &reporterr.TooLarge{What: "runs", Limit: MaxRuns}
	}
	for i, r := range log.Runs {
		if r == nil || r.Tool == nil || r.Tool.Driver == nil || str(r.Tool.Driver.Name) == "" {
			return nil, invalid("runs[%d].tool.driver.name is missing", i)
		}
		if len(r.Results) > MaxResultsPerRun {
			return nil, &reporterr.TooLarge{What: "results in a run", Limit: MaxResultsPerRun}
		}
		for j, res := range r.Results {
			if res == nil || res.Message == nil || (str(res.Message.Text) == "" && str(res.Message.ID) == "") {
				return nil, invalid("runs[%d].results[%d].message is missing", i, j)
			}
		}
	}
	if err := markAbsentIndexes(data, &log); err != nil {
		return nil, err
	}
	return &log, nil
}

// markAbsentIndexes sets the rule index of results that name their rule
// neither by id nor by index to -1, SARIF's default: the library decodes
// an absent index as 0, which would attribute them to the first rule. The
// indexes are read in a second, light pass, only when such results exist.
func markAbsentIndexes(data []byte, log *Log) error {
	unnamed := false
	for _, r := range log.Runs {
		for _, res := range r.Results {
			if res != nil && res.RuleID == nil && (res.Rule == nil || res.Rule.ID == nil) {
				unnamed = true
			}
		}
	}
	if !unnamed {
		return nil
	}
	var idx struct {
		Runs []struct {
			Results []struct {
				RuleIndex *int `json:"ruleIndex"`
				Rule      *struct {
					Index *int `json:"index"`
				} `json:"rule"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return decodeError(err)
	}
	for i, r := range log.Runs {
		for j, res := range r.Results {
			if res == nil || i >= len(idx.Runs) || j >= len(idx.Runs[i].Results) {
				continue
			}
			if x := idx.Runs[i].Results[j]; x.RuleIndex == nil {
				res.RuleIndex = -1
			}
			if x := idx.Runs[i].Results[j]; res.Rule != nil && (x.Rule == nil || x.Rule.Index == nil) {
				res.Rule.Index = -1
			}
		}
	}
	return nil
}

// Parse reads a report and returns its findings in report order. Results
// whose kind says they are not a problem (`pass`, `notApplicable`,
// `informational`) are left out; results without a rule id or with a path
// outside the repository are left out and counted in Dropped.
func Parse(data []byte) (reportfinding.Report, error) {
	log, err := Decode(data)
	if err != nil {
		return reportfinding.Report{}, err
	}
	return Findings(log), nil
}

// Findings reads the findings of a decoded log (see Parse).
func Findings(log *Log) reportfinding.Report {
	var rep reportfinding.Report
	for _, r := range log.Runs {
		rc := newRunContext(r)
		if !slices.Contains(rep.Tools, rc.tool) {
			rep.Tools = append(rep.Tools, rc.tool)
		}
		for _, res := range r.Results {
			switch res.Kind {
			case "pass", "notApplicable", "informational":
				continue
			}
			f, dropped := rc.finding(res)
			if dropped != "" {
				if rep.Dropped == nil {
					rep.Dropped = map[string]int{}
				}
				rep.Dropped[dropped]++
				continue
			}
			rep.Findings = append(rep.Findings, f)
		}
		provenance(&rep, r)
		if rep.Category == "" {
			rep.Category = Category(r)
		}
	}
	return rep
}

// Category is the analysis category of a run, by GitHub code scanning's
// rule: runAutomationDetails.id is "category/run-id", so the category is
// the id up to its last "/" ("my-analysis/tool1/2022-01-02" and
// "my-analysis/tool1/" are both "my-analysis/tool1"); an id without "/"
// is a run id only, of no category.
func Category(r *gosarif.Run) string {
	if r == nil || r.AutomationDetails == nil {
		return ""
	}
	id := str(r.AutomationDetails.ID)
	k := strings.LastIndex(id, "/")
	if k < 0 {
		return ""
	}
	return id[:k]
}

// provenance fills the report's branch, repository and commit from the
// first run's versionControlProvenance that gives them (as written there).
func provenance(rep *reportfinding.Report, r *gosarif.Run) {
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
		if rep.CommitSHA == "" {
			rep.CommitSHA = str(vc.RevisionID)
		}
	}
}

// IsLog tells whether data is a JSON object with "runs": a SARIF log
// rather than another format's output.
func IsLog(data []byte) bool {
	var top map[string]json.RawMessage
	if json.NewDecoder(bytes.NewReader(data)).Decode(&top) != nil {
		return false
	}
	_, ok := top["runs"]
	return ok
}

// checkShape rejects what is not a SARIF 2.1.0 log before the library sees
// it: the library accepts any JSON object (a missing version or runs member
// decodes to zero values).
func checkShape(data []byte) error {
	if err := reporterr.Text(format, data); err != nil {
		return err
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
		return invalid("%q has the wrong type (a JSON %s)", jsonerr.MemberPath(te.Field), te.Value)
	}
	return invalid("%s", strings.TrimPrefix(err.Error(), "json: "))
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
