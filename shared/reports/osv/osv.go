// Package osv turns OSV-Scanner's JSON output (`osv-scanner --format
// json`) into SCA findings: one per vulnerable package and group of
// aliased advisories. OSV-Scanner does not analyse reachability here, so
// every finding is not_analyzed. Its OSV record types serve the
// govulncheck parser too.
package osv

import (
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

// Tool is the findings' tool name.
const Tool = "osv-scanner"

const format = "OSV-Scanner JSON"

// output is OSV-Scanner's models.VulnerabilityResults, as far as read.
type output struct {
	Results *[]struct {
		Source source `json:"source"`
		// PackageSource is the member's name before OSV-Scanner 1.2.
		PackageSource source `json:"packageSource"`
		Packages      *[]struct {
			Package struct {
				Name      string `json:"name"`
				Version   string `json:"version"`
				Ecosystem string `json:"ecosystem"`
			} `json:"package"`
			Vulnerabilities []Entry `json:"vulnerabilities"`
			Groups          []group `json:"groups"`
		} `json:"packages"`
	} `json:"results"`
}

type source struct {
	Path string `json:"path"`
}

// group is a set of advisories OSV-Scanner found to be aliases of one
// another, with the highest CVSS score among them.
type group struct {
	IDs         []string `json:"ids"`
	Aliases     []string `json:"aliases"`
	MaxSeverity string   `json:"max_severity"`
}

// Parse reads OSV-Scanner's JSON output.
func Parse(data []byte) (reportfinding.Report, error) {
	var out output
	if err := reporterr.Unmarshal(format, data, &out); err != nil {
		return reportfinding.Report{}, err
	}
	if out.Results == nil {
		return reportfinding.Report{}, reporterr.Invalidf(format, `missing "results"`)
	}
	rep := reportfinding.Report{Tools: []string{Tool}}
	for i, res := range *out.Results {
		src := res.Source.Path
		if src == "" {
			src = res.PackageSource.Path
		}
		if res.Packages == nil {
			if src == "" {
				return reportfinding.Report{}, reporterr.Invalidf(format, "results[%d] has neither \"source\" nor \"packages\"", i)
			}
			continue
		}
		// OSV-Scanner writes the manifest's path as it found it, often
		// absolute: then the finding keeps no manifest path.
		manifest, _ := norm.Path(src)
		for _, p := range *res.Packages {
			if strings.TrimSpace(p.Package.Name) == "" {
				continue
			}
			byID := map[string]Entry{}
			for _, v := range p.Vulnerabilities {
				byID[v.ID] = v
			}
			groups := p.Groups
			if len(groups) == 0 {
				for _, v := range p.Vulnerabilities {
					groups = append(groups, group{IDs: []string{v.ID}})
				}
			}
			for _, g := range groups {
				if len(g.IDs) == 0 || strings.TrimSpace(g.IDs[0]) == "" {
					continue
				}
				if len(rep.Findings) == norm.MaxFindings {
					return reportfinding.Report{}, &reporterr.TooLarge{What: "vulnerable packages", Limit: norm.MaxFindings}
				}
				var entries []Entry
				for _, id := range g.IDs {
					if e, ok := byID[id]; ok {
						entries = append(entries, e)
					}
				}
				dep := Dependency(p.Package.Name, p.Package.Version, p.Package.Ecosystem, g.IDs, entries)
				if s, err := strconv.ParseFloat(strings.TrimSpace(g.MaxSeverity), 64); err == nil && s > 0 && s <= 10 {
					dep.CVSS = s
					if dep.Severity == "UNSPECIFIED" {
						dep.Severity = norm.Severity(s)
					}
				}
				dep.Manifest = manifest
				dep.Reachability.Status = reportfinding.NotAnalyzed
				rep.Findings = append(rep.Findings, SCAFinding(Tool, dep))
			}
		}
	}
	return rep, nil
}

// Dependency builds the dependency of an SCA finding from the advisories
// of one vulnerability: ids, summary, details, fix version, the highest
// CVSS score among their vectors, and the severity word (the advisory's
// own, else the score's rating, else UNSPECIFIED).
func Dependency(name, version, ecosystem string, ids []string, entries []Entry) *reportfinding.Dependency {
	d := &reportfinding.Dependency{
		Name: norm.ClipID(name), Version: norm.ClipID(version), Ecosystem: norm.ClipID(ecosystem),
		Severity: "UNSPECIFIED",
	}
	lists := [][]string{ids}
	word := ""
	for _, e := range entries {
		lists = append(lists, []string{e.ID}, e.Aliases)
		if d.Summary == "" {
			d.Summary = norm.Clip(strings.TrimSpace(e.Summary))
		}
		if d.Details == "" {
			d.Details = norm.Clip(strings.TrimSpace(e.Details))
		}
		if f := e.FixedFor(name, version); f != "" && (d.FixVersion == "" || CompareVersions(f, d.FixVersion) < 0) {
			d.FixVersion = norm.ClipID(f)
		}
		if s := e.Score(); s > d.CVSS {
			d.CVSS = s
		}
		if w := e.SeverityWord(); w != "" && word == "" {
			word = w
		}
	}
	d.IDs, d.CVE = IDs(lists...)
	switch {
	case word != "":
		d.Severity = word
	case d.CVSS > 0:
		d.Severity = norm.Severity(d.CVSS)
	}
	return d
}

// SCAFinding wraps a dependency into a finding: its rule is the primary
// advisory id, its path the manifest, its urgency from the CVSS score,
// else the severity word (UNSPECIFIED is medium).
func SCAFinding(tool string, d *reportfinding.Dependency) reportfinding.Finding {
	f := reportfinding.Finding{
		Kind: reportfinding.SCA, Tool: tool, RuleID: d.IDs[0], Path: d.Manifest,
		Title: d.Summary, Message: d.Details, SCA: d,
	}
	if f.Title == "" {
		f.Title = norm.Clip(d.IDs[0] + " in " + d.Name)
	}
	if d.CVSS > 0 {
		f.Urgency = norm.UrgencyOfScore(d.CVSS)
	} else {
		f.Urgency = norm.UrgencyOfSeverity(d.Severity)
	}
	return f
}
