package norm

import (
	"strings"

	"github.com/acme/codescan-api/shared/cwe"
)

// Classifications of quality findings.
const (
	Correctness     = "Correctness"
	Reliability     = "Reliability"
	Maintainability = "Maintainability"
	Performance     = "Performance"
	Style           = "Style"
)

// classOfWord maps the words rules use for their category or tags
// (CodeQL's tags, ESLint's and Checkstyle's categories, Semgrep's
// category).
var classOfWord = map[string]string{
	"correctness": Correctness, "bug": Correctness, "bugs": Correctness, "possible-errors": Correctness,
	"reliability": Reliability, "error-handling": Reliability, "concurrency": Reliability, "resource-leak": Reliability,
	"maintainability": Maintainability, "complexity": Maintainability, "useless-code": Maintainability,
	"unused": Maintainability, "duplication": Maintainability, "deprecated": Maintainability,
	"best-practice": Maintainability, "best-practices": Maintainability, "best practices": Maintainability,
	"performance": Performance, "efficiency": Performance,
	"style": Style, "readability": Style, "formatting": Style, "naming": Style, "convention": Style,
	"stylistic issues": Style, "suggestion": Style, "layout": Style,
}

// Classify reads a rule's category or tag as a quality classification.
func Classify(word string) (string, bool) {
	c, ok := classOfWord[strings.ToLower(strings.TrimSpace(word))]
	return c, ok
}

// CWE reads a CWE written as scanners tag it: `CWE-89`, `CWE-89: Improper ...`,
// `external/cwe/cwe-089` (CodeQL). Bare numbers are not CWEs in tags.
func CWE(tag string) (int, bool) {
	t := strings.TrimSpace(tag)
	if rest, ok := CutPrefixFold(t, "external/cwe/"); ok {
		return cwe.Parse(rest)
	}
	rest, ok := CutPrefixFold(t, "CWE-")
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if end < len(rest) && !strings.ContainsRune(": )]", rune(rest[end])) {
		return 0, false
	}
	return cwe.Parse(rest[:end])
}
