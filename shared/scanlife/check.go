package scanlife

import (
	"errors"
	"fmt"

	"github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports"
)

// Kind is the class of a refusal: what the upload answers (400, 413,
// 409).
type Kind int

// Kinds of refusal.
const (
	Invalid Kind = iota + 1
	TooLarge
	Conflict
)

// Reasons a scan records (failed_reason) when its stored report is
// refused.
const (
	ReasonUnreadable = "The uploaded report could not be read"
	ReasonTooLarge   = "The uploaded report is too large"
	ReasonInvalid    = "The uploaded report is invalid"
)

// Refused is an upload or a report refused: its kind, the reason a scan
// refused for it records, and the message, which the upload answers and
// the scan's error repeats.
type Refused struct {
	Kind    Kind
	Reason  string
	Message string
}

func (r *Refused) Error() string { return r.Message }

func refused(k Kind, reason, format string, args ...any) *Refused {
	return &Refused{Kind: k, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// formatNames name each engine's report format in messages.
var formatNames = map[string]string{
	"sarif": "SARIF", "codeql": "SARIF", "snyk": "SARIF", "semgrep": "Semgrep",
	"govulncheck": "govulncheck", "osv-scanner": "OSV-Scanner", "cyclonedx": "CycloneDX",
	"spdx": "SPDX",
}

// Report is a checked report: decoded, and parsed.
type Report struct {
	Body   []byte
	Parsed reportfinding.Report
}

// Check decodes a report as sent (gzip-compressed or not) and parses it as
// engine's, within the limits of one upload (ingest.MaxCompressedBytes,
// ingest.MaxReportBytes, ingest.MaxFindings, the readers' own). A report
// refused is *Refused; another error is the reader's failure.
func Check(engine string, sent []byte) (Report, error) {
	if ingest.IsGzip(sent) && len(sent) > ingest.MaxCompressedBytes {
		return Report{}, refused(TooLarge, ReasonTooLarge, "The compressed report exceeds the upload limit of %d MiB", ingest.MaxCompressedBytes>>20)
	}
	body, err := ingest.Decode(sent)
	switch {
	case errors.Is(err, ingest.ErrBadGzip):
		return Report{}, refused(Invalid, ReasonUnreadable, "The report is not valid gzip")
	case errors.Is(err, ingest.ErrTooLarge):
		return Report{}, refused(TooLarge, ReasonTooLarge, "The decompressed report exceeds the upload limit of %d MiB", ingest.MaxReportBytes>>20)
	case err != nil:
		return Report{}, err
	}
	rep, err := reports.Parse(engine, body)
	if err != nil {
		return Report{}, readerRefusal(engine, err)
	}
	if n := len(rep.Findings); n > ingest.MaxFindings {
		return Report{}, refused(TooLarge, ReasonTooLarge, "The report has %d results; at most %d are accepted per upload", n, ingest.MaxFindings)
	}
	return Report{Body: body, Parsed: rep}, nil
}

// readerRefusal is a format reader's error as a refusal, when it refuses
// the report; else the error itself.
func readerRefusal(engine string, err error) error {
	var bad *reports.InvalidError
	if errors.As(err, &bad) {
		return refused(Invalid, ReasonInvalid, "Invalid %s report: %s", formatNames[engine], bad.Problem)
	}
	var big *reports.TooLargeError
	if errors.As(err, &big) {
		return refused(TooLarge, ReasonTooLarge, "The report has more than %d %s", big.Limit, big.What)
	}
	return err
}

// Components reads the components a checked report of engine lists (see
// reports.Components), its reader's refusals as Check's.
func Components(engine string, rep Report) (components.Inventory, error) {
	inv, err := reports.Components(engine, rep.Body)
	if err != nil {
		return inv, readerRefusal(engine, err)
	}
	return inv, nil
}
