package govulncheck

import (
	"strings"

	gosarif "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/reports/osv"
	"github.com/acme/codescan-api/shared/reports/sarif"
)

// IsGovulncheckSARIF tells whether a SARIF log is govulncheck's: every run's
// driver is govulncheck.
func IsGovulncheckSARIF(log *sarif.Log) bool {
	for _, r := range log.Runs {
		if r.Tool.Driver.Name == nil || *r.Tool.Driver.Name != Tool {
			return false
		}
	}
	return len(log.Runs) > 0
}

// sarifLevel maps govulncheck's SARIF levels back to its finding levels.
var sarifLevel = map[string]int{"error": symbolLevel, "warning": packageLevel, "note": moduleLevel}

// parseSARIF reads `govulncheck -format sarif`: one result per OSV id,
// its level the finding's level, its stacks the call paths (entry point
// first, the vulnerable symbol's module@version last). The SARIF form
// carries no version or fixed version for package and module level
// findings, and names the package (not the module) at package level: the
// JSON form is the richer one.
func parseSARIF(data []byte) (reportfinding.Report, error) {
	log, err := sarif.Decode(data)
	if err != nil {
		return reportfinding.Report{}, err
	}
	return FromSARIF(log), nil
}

// FromSARIF reads the findings of govulncheck's decoded SARIF log.
func FromSARIF(log *sarif.Log) reportfinding.Report {
	rep := reportfinding.Report{Tools: []string{Tool}}
	for _, r := range log.Runs {
		rules := map[string]*gosarif.ReportingDescriptor{}
		for _, rule := range r.Tool.Driver.Rules {
			if rule != nil && rule.ID != nil {
				rules[*rule.ID] = rule
			}
		}
		for _, res := range r.Results {
			if res.RuleID == nil || strings.TrimSpace(*res.RuleID) == "" {
				if rep.Dropped == nil {
					rep.Dropped = map[string]int{}
				}
				rep.Dropped[sarif.MissingRuleID]++
				continue
			}
			rep.Findings = append(rep.Findings, sarifFinding(res, rules[*res.RuleID]))
		}
	}
	return rep
}

func sarifFinding(res *gosarif.Result, rule *gosarif.ReportingDescriptor) reportfinding.Finding {
	id := *res.RuleID
	v := &vuln{id: id, level: sarifLevel[res.Level]}
	if v.level == 0 {
		v.level = moduleLevel
	}
	for _, st := range res.Stacks {
		if st == nil || len(st.Frames) == 0 {
			continue
		}
		if last := st.Frames[len(st.Frames)-1]; last != nil && last.Module != nil {
			mod, version, _ := strings.Cut(*last.Module, "@")
			if v.module == "" {
				v.module, v.version = mod, version
			}
		}
		if len(v.usages) < maxUsages {
			v.usages = appendUsage(v.usages, st.Frames)
		}
	}
	if v.module == "" && res.Message != nil && res.Message.Text != nil {
		// "Your code imports 1 vulnerable package (golang.org/x/text/language), ..."
		if _, rest, ok := strings.Cut(*res.Message.Text, "("); ok {
			if names, _, ok := strings.Cut(rest, ")"); ok {
				v.module, _, _ = strings.Cut(names, ",")
			}
		}
	}
	if strings.TrimSpace(v.module) == "" {
		v.module = id
	}
	e := osv.Entry{ID: id}
	if rule != nil {
		if rule.Properties != nil {
			e.Aliases = rule.Properties.Tags
		}
		if rule.ShortDescription != nil && rule.ShortDescription.Text != nil {
			e.Summary = strings.TrimPrefix(*rule.ShortDescription.Text, "["+id+"] ")
		}
		if rule.FullDescription != nil && rule.FullDescription.Text != nil {
			e.Details = *rule.FullDescription.Text
		}
	}
	return v.finding([]osv.Entry{e})
}

// appendUsage adds a stack's entry point (its first frame) as a usage.
func appendUsage(usages []reportfinding.Usage, frames []*gosarif.StackFrame) []reportfinding.Usage {
	steps := make([]string, 0, len(frames))
	for _, fr := range frames {
		if fr != nil && fr.Location != nil && fr.Location.Message != nil && fr.Location.Message.Text != nil {
			steps = append(steps, *fr.Location.Message.Text)
		}
	}
	entry := frames[0]
	if entry == nil || entry.Location == nil {
		return usages
	}
	u := reportfinding.Usage{Reachable: true, Path: norm.Clip(strings.Join(steps, " -> "))}
	if len(steps) > 0 {
		u.Function = norm.Clip(steps[0])
	}
	if pl := entry.Location.PhysicalLocation; pl != nil {
		if pl.ArtifactLocation != nil && pl.ArtifactLocation.URI != nil {
			u.File, _ = norm.Path(*pl.ArtifactLocation.URI)
		}
		if pl.Region != nil && pl.Region.StartLine != nil && *pl.Region.StartLine > 0 {
			u.Line = *pl.Region.StartLine
		}
	}
	for _, seen := range usages {
		if seen.File == u.File && seen.Line == u.Line && seen.Function == u.Function {
			return usages
		}
	}
	return append(usages, u)
}
