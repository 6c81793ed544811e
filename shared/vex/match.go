package vex

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Finding is what matching reads of an SCA finding.
type Finding struct {
	ID        string
	ProjectID int64
	Branch    string
	Tool      string
	// Advisories are the finding's advisory ids: its primary one, its CVE
	// and its aliases, as the report gave them.
	Advisories               []string
	Ecosystem, Name, Version string
	Status, Reason           string
}

// Index finds the statements of a document that apply to a finding: by
// each canonical advisory id (a map), then by package.
type Index struct {
	doc  Document
	byID map[string][]int // canonical id -> statements naming it
	// planned counts the outcomes Plan made, against MaxOutcomes.
	planned int
}

// MaxOutcomes bounds the (statement, finding) outcomes one import plans:
// a document whose statements repeat each other over many findings would
// otherwise cost statements × findings. Past it Plan refuses (413).
const MaxOutcomes = 200_000

// NewIndex indexes the document's statements by advisory id.
func NewIndex(doc Document) *Index {
	x := &Index{doc: doc, byID: map[string][]int{}}
	for n, st := range doc.Statements {
		for _, id := range st.IDs {
			x.byID[id] = append(x.byID[id], n)
		}
	}
	return x
}

// Document is the indexed document.
func (x *Index) Document() Document { return x.doc }

// Statements returns the statements that apply to f, the one that decides
// first: the latest (At), then the later in the document. A statement
// applies when it names one of f's advisory ids and one of its packages
// is f's (see Package.Matches).
func (x *Index) Statements(f Finding) []int {
	var out []int
	seen := map[int]bool{}
	for _, id := range f.Advisories {
		for _, n := range x.byID[CanonicalID(id)] {
			if !seen[n] && x.doc.Statements[n].matches(f) {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	slices.SortFunc(out, func(a, b int) int {
		sa, sb := x.doc.Statements[a], x.doc.Statements[b]
		if c := sb.At.Compare(sa.At); c != 0 {
			return c
		}
		return cmp.Compare(sb.order, sa.order)
	})
	return out
}

func (st Statement) matches(f Finding) bool {
	return slices.ContainsFunc(st.Packages, func(p Package) bool { return p.Matches(f.Ecosystem, f.Name, f.Version) })
}

// Matches reports whether the package is a finding's package of ecosystem,
// name and version: the ecosystem compared without its release suffix
// (OSV's Alpine:v3.18 is Alpine) and case, the name without case (PyPI's
// by its normalized form), and the version exactly (Go's with or without
// its leading v) unless the package names none (every version).
func (p Package) Matches(ecosystem, name, version string) bool {
	eco := ecosystemBase(ecosystem)
	if !strings.EqualFold(eco, ecosystemBase(p.Ecosystem)) || !sameName(eco, p.Name, name) {
		return false
	}
	if p.Version == "" {
		return true
	}
	if strings.EqualFold(eco, "Go") {
		return strings.TrimPrefix(p.Version, "v") == strings.TrimPrefix(version, "v")
	}
	return p.Version == version
}

func ecosystemBase(e string) string {
	base, _, _ := strings.Cut(strings.TrimSpace(e), ":")
	return base
}

// pypiSeparators are the runs PEP 503 normalizes to one hyphen.
var pypiSeparators = regexp.MustCompile(`[-_.]+`)

func sameName(ecosystem, a, b string) bool {
	if strings.EqualFold(ecosystem, "PyPI") {
		a, b = pypiSeparators.ReplaceAllString(a, "-"), pypiSeparators.ReplaceAllString(b, "-")
	}
	return strings.EqualFold(a, b)
}

// Results of a statement for a finding.
const (
	Changed   = "changed"   // the status changes (in a dry run: would change)
	Unchanged = "unchanged" // the finding already is as the statement says
	Skipped   = "skipped"   // the statement does not act on it: Why says why
)

// Outcome is what a statement does to a finding.
type Outcome struct {
	Statement int // index in the document's statements
	Finding   Finding
	Result    string
	To        string // the status after (the current one unless Changed)
	Reason    string // the reason after
	Why       string // for Unchanged and Skipped
	// Superseded: another statement decides the finding (Skipped).
	Superseded bool
}

// Plan is the outcome of every statement that applies to each finding:
// the deciding statement's (Effect), then each other one's, skipped as
// superseded. Findings no statement applies to are left out. An *Error
// (TooLarge) once the import's outcomes would pass MaxOutcomes.
func (x *Index) Plan(fs []Finding) ([]Outcome, error) {
	var out []Outcome
	for _, f := range fs {
		sts := x.Statements(f)
		if len(sts) == 0 {
			continue
		}
		if x.planned += len(sts); x.planned > MaxOutcomes {
			return nil, &Error{Problem: fmt.Sprintf("the document's statements apply to findings more than %d times; import it per project (project_id) or with fewer repeated statements", MaxOutcomes), TooLarge: true}
		}
		out = append(out, x.Effect(sts[0], f))
		for _, n := range sts[1:] {
			out = append(out, Outcome{Statement: n, Finding: f, Result: Skipped, To: f.Status, Reason: f.Reason, Superseded: true,
				Why: fmt.Sprintf("superseded by %s", x.doc.Statements[sts[0]].Pointer)})
		}
	}
	return out, nil
}

// Decide is the deciding statement's outcome for f, false when no
// statement applies.
func (x *Index) Decide(f Finding) (Outcome, bool) {
	sts := x.Statements(f)
	if len(sts) == 0 {
		return Outcome{}, false
	}
	return x.Effect(sts[0], f), true
}
