package sarif

import (
	"strings"

	gosarif "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/norm"
)

// suppression reads a result's suppressions. The result is suppressed in
// the code when one of them is of kind `inSource` with status `accepted`
// or none, and no suppression is `underReview` or `rejected`: one still
// argued over, or refused, leaves the result open. An empty array (what
// staticcheck writes for every result it did not suppress) is no
// suppression.
//
// Suppressions of kind `external` (kept outside the code: a tool's own
// triage store or baseline) are not followed: this service is where
// triage is decided, audited and reverted, and a dismissal kept elsewhere
// could be neither seen nor undone here.
func suppression(res *gosarif.Result) *reportfinding.Suppression {
	var held *reportfinding.Suppression
	for _, s := range res.Suppressions {
		if s == nil {
			continue
		}
		status := str(s.Status)
		switch {
		case strings.EqualFold(status, "underReview"), strings.EqualFold(status, "rejected"):
			return nil
		case held == nil && strings.EqualFold(str(s.Kind), reportfinding.InSource) && (status == "" || strings.EqualFold(status, "accepted")):
			held = &reportfinding.Suppression{Kind: reportfinding.InSource, Justification: norm.Clip(strings.TrimSpace(str(s.Justification)))}
		}
	}
	return held
}
