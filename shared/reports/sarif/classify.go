package sarif

import (
	"strings"

	gosarif "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// Classifications of quality findings.
const (
	Correctness     = "Correctness"
	Reliability     = "Reliability"
	Maintainability = "Maintainability"
	Performance     = "Performance"
	Style           = "Style"
)

// classOfWord reads the words rules use for their category or tags
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

// staticcheckClass classifies Staticcheck's checks by their prefix, as its
// documentation groups them; its SARIF rules carry neither tags nor a
// category.
var staticcheckClass = []struct{ prefix, class string }{
	{"SA", Correctness}, {"ST", Style}, {"S", Maintainability}, {"QF", Style}, {"U", Maintainability},
}

// classification names the class of a quality finding: the first
// `category` property, then the first tag, of the result then the rule,
// that names a known class; for Staticcheck its check's group; else
// Maintainability.
func (rc *runContext) classification(res *gosarif.Result, rule *gosarif.ReportingDescriptor) string {
	bags := []*gosarif.PropertyBag{res.Properties}
	if rule != nil {
		bags = append(bags, rule.Properties)
	}
	for _, pb := range bags {
		if pb == nil {
			continue
		}
		if c, ok := pb.Properties["category"].(string); ok {
			if class, ok := classOfWord[strings.ToLower(strings.TrimSpace(c))]; ok {
				return class
			}
		}
		for _, t := range pb.Tags {
			if class, ok := classOfWord[strings.ToLower(strings.TrimSpace(t))]; ok {
				return class
			}
		}
	}
	if strings.EqualFold(rc.tool, "staticcheck") {
		id := str(res.RuleID)
		for _, p := range staticcheckClass {
			if strings.HasPrefix(id, p.prefix) {
				return p.class
			}
		}
	}
	return Maintainability
}
