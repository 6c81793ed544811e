// Package wellformed checks what every parser promises of its findings,
// for the parsers' tests and fuzz targets (test support only).
package wellformed

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

// Parser is a format's Parse.
type Parser func([]byte) (reportfinding.Report, error)

// Fixture parses testdata/name with parse and fails t unless it parses
// into a report that keeps every promise.
func Fixture(t testing.TB, parse Parser, name string) reportfinding.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := Check(rep); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rep
}

// Fuzz is every parser's fuzz target: any input gives a report that keeps
// every promise, or one of the two typed errors; never a panic. Each
// format's seeds are in its testdata/fuzz/FuzzParse.
func Fuzz(f *testing.F, parse Parser) {
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := parse(data)
		if err != nil {
			var invalid *reporterr.Invalid
			var big *reporterr.TooLarge
			if !errors.As(err, &invalid) && !errors.As(err, &big) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if err := Check(rep); err != nil {
			t.Fatal(err)
		}
	})
}

var urgencies = map[string]bool{reportfinding.Critical: true, reportfinding.High: true, reportfinding.Medium: true, reportfinding.Low: true}

var statuses = map[string]bool{reportfinding.Reachable: true, reportfinding.PackageImported: true, reportfinding.ModuleRequired: true, reportfinding.NotAnalyzed: true}

// Check returns the first broken promise of a report, or nil.
func Check(rep reportfinding.Report) error {
	for i, f := range rep.Findings {
		if err := checkFinding(f); err != nil {
			return fmt.Errorf("finding %d (%+v): %w", i, f, err)
		}
	}
	for reason, n := range rep.Dropped {
		if reason == "" || n <= 0 {
			return fmt.Errorf("dropped %q: %d", reason, n)
		}
	}
	return nil
}

func checkFinding(f reportfinding.Finding) error {
	switch {
	case f.Kind != reportfinding.SAST && f.Kind != reportfinding.Quality && f.Kind != reportfinding.SCA:
		return fmt.Errorf("kind %q", f.Kind)
	case !urgencies[f.Urgency]:
		return fmt.Errorf("urgency %q", f.Urgency)
	case f.Tool == "" || f.RuleID == "":
		return fmt.Errorf("no tool or rule id")
	case f.Line < 0 || f.EndLine < 0 || (f.EndLine != 0 && f.EndLine < f.Line) || (f.Line == 0 && f.EndLine != 0):
		return fmt.Errorf("lines %d-%d", f.Line, f.EndLine)
	case f.CWE < 0:
		return fmt.Errorf("cwe %d", f.CWE)
	case (f.Kind == reportfinding.Quality) != (f.Classification != ""):
		return fmt.Errorf("classification %q for kind %s", f.Classification, f.Kind)
	case (f.Kind == reportfinding.SCA) != (f.SCA != nil):
		return fmt.Errorf("dependency %v for kind %s", f.SCA, f.Kind)
	}
	if err := relative(f.Path); err != nil {
		return err
	}
	if len(f.Tool) > norm.MaxID || len(f.RuleID) > norm.MaxID || len(f.Path) > norm.MaxPath {
		return fmt.Errorf("tool, rule id or path too long")
	}
	for _, s := range []string{f.Title, f.Message, f.Snippet, f.Fingerprint, f.RuleID} {
		if len(s) > norm.MaxText || !utf8.ValidString(s) {
			return fmt.Errorf("text of %d bytes or not UTF-8", len(s))
		}
	}
	if sup := f.Suppression; sup != nil && (sup.Kind != reportfinding.InSource || len(sup.Justification) > norm.MaxText || !utf8.ValidString(sup.Justification)) {
		return fmt.Errorf("suppression %+v", sup)
	}
	if d := f.SCA; d != nil {
		if d.Name == "" || len(d.IDs) == 0 || !statuses[d.Reachability.Status] || d.CVSS < 0 || d.CVSS > 10 {
			return fmt.Errorf("dependency %+v", d)
		}
		if err := relative(d.Manifest); err != nil {
			return err
		}
		for _, u := range d.Reachability.Usages {
			if err := relative(u.File); err != nil {
				return err
			}
			if u.Line < 0 {
				return fmt.Errorf("usage line %d", u.Line)
			}
		}
	}
	return nil
}

// relative checks a stored path: empty, or clean, relative, slashed,
// inside, and following the text rule (norm.Path applies it).
func relative(p string) error {
	if p == "" {
		return nil
	}
	if cleantext.Visible(p) != p {
		return fmt.Errorf("path %q breaks the text rule", p)
	}
	if strings.Contains(p, `\`) || strings.HasPrefix(p, "/") || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") || norm.IsAbs(p) {
		return fmt.Errorf("path %q is not repo-relative", p)
	}
	return nil
}

// Visible returns the first text of a report that breaks the edge's text
// rule, as an error naming it, or nil: what reports.Parse promises of every
// text (norm.Text), checked by that rule's own functions.
func Visible(rep reportfinding.Report) error {
	var bad error
	rep.MapText(func(s string, k reportfinding.TextKind) string {
		want := cleantext.Visible(s)
		if k == reportfinding.TextProse {
			want = cleantext.VisibleLines(s)
		}
		if bad == nil && want != s {
			bad = fmt.Errorf("text %q (kind %d) breaks the text rule", s, k)
		}
		return s
	})
	return bad
}
