// Package reporterr holds the two errors every report parser returns for
// input it refuses, so the upload handler answers them without knowing the
// format: Invalid (400) and TooLarge (413).
package reporterr

import "fmt"

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
