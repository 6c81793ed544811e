// Package reporterr holds the two errors every report parser returns for
// input it refuses, so the upload handler answers them without knowing the
// format: Invalid (400) and TooLarge (413).
package reporterr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/jsonerr"
)

// Invalid is a report that cannot be read as its format. Problem names
// what is wrong, for the uploader.
type Invalid struct {
	Format  string // "SARIF", "Semgrep JSON", ...
	Problem string
}

func (e *Invalid) Error() string { return "invalid " + e.Format + " report: " + e.Problem }

// Invalidf builds an Invalid error.
func Invalidf(format, problem string, args ...any) error {
	return &Invalid{Format: format, Problem: fmt.Sprintf(problem, args...)}
}

// TooLarge is a report past one of the limits (GitHub code scanning's:
// 25,000 results per run, 20 runs per file).
type TooLarge struct {
	What  string // "results in a run", "runs"
	Limit int
}

func (e *TooLarge) Error() string {
	return fmt.Sprintf("the report has more than %d %s", e.Limit, e.What)
}

// Text refuses a body that is empty or not UTF-8, as every report is text.
func Text(format string, data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return Invalidf(format, "the body is empty")
	}
	if !utf8.Valid(data) {
		return Invalidf(format, "the body is not UTF-8 text")
	}
	return nil
}

// Unmarshal decodes a JSON report into v, refusing what Text refuses and
// naming the JSON problem as DecodeJSON does.
func Unmarshal(format string, data []byte, v any) error {
	if err := Text(format, data); err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return DecodeJSON(format, err)
	}
	return nil
}

// DecodeJSON turns an encoding/json error into an Invalid error naming
// the problem: the syntax error and its offset, or the member of the wrong
// type.
func DecodeJSON(format string, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return Invalidf(format, "not valid JSON (%s at byte %d)", se.Error(), se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return Invalidf(format, "the top level must be a JSON object")
		}
		return Invalidf(format, "%q has the wrong type (a JSON %s)", jsonerr.MemberPath(te.Field), te.Value)
	}
	return Invalidf(format, "%s", strings.TrimPrefix(err.Error(), "json: "))
}
