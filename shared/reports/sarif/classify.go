package sarif

import (
	"strings"

	gosarif "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/acme/codescan-api/shared/reports/norm"
)

// staticcheckClass classifies Staticcheck's checks by their prefix, as its
// documentation groups them; its SARIF rules carry neither tags nor a
// category.
var staticcheckClass = []struct{ prefix, class string }{
	{"SA", norm.Correctness}, {"ST", norm.Style}, {"S", norm.Maintainability}, {"QF", norm.Style}, {"U", norm.Maintainability},
}

// classification names the class of a quality finding: the first
// `category` property, then the first tag, of the result then the rule,
// that names a known class; for Staticcheck its check's group; else
// norm.Maintainability.
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
			if class, ok := norm.Classify(c); ok {
				return class
			}
		}
		for _, t := range pb.Tags {
			if class, ok := norm.Classify(t); ok {
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
	return norm.Maintainability
}
