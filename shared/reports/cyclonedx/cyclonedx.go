// Package cyclonedx turns a CycloneDX 1.4–1.7 JSON document with
// vulnerabilities (what Trivy, Grype and Dependency-Track export) into SCA
// findings: one per vulnerability and affected component. Decoding is the
// CycloneDX Go library's; components are resolved by bom-ref and named by
// their package URL.
package cyclonedx

import (
	"regexp"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
	packageurl "github.com/package-url/packageurl-go"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/reports/osv"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

// Tool names the findings when the document names no tool of its own.
const Tool = "cyclonedx"

const format = "CycloneDX JSON"

// Parse reads a CycloneDX JSON document. A document without
// vulnerabilities (a plain SBOM) has no findings.
func Parse(data []byte) (reportfinding.Report, error) {
	var bom cdx.BOM
	if err := reporterr.Unmarshal(format, data, &bom); err != nil {
		return reportfinding.Report{}, err
	}
	if bom.BOMFormat != cdx.BOMFormat {
		return reportfinding.Report{}, reporterr.Invalidf(format, `"bomFormat" must be %q`, cdx.BOMFormat)
	}
	if bom.SpecVersion == 0 {
		return reportfinding.Report{}, reporterr.Invalidf(format, `missing "specVersion"`)
	}
	if bom.SpecVersion < cdx.SpecVersion1_4 {
		return reportfinding.Report{}, reporterr.Invalidf(format, "specVersion %s has no vulnerabilities (1.4 or later is needed)", bom.SpecVersion)
	}
	components := map[string]cdx.Component{}
	if bom.Metadata != nil && bom.Metadata.Component != nil {
		index(components, []cdx.Component{*bom.Metadata.Component})
	}
	if bom.Components != nil {
		index(components, *bom.Components)
	}
	tool := toolName(bom)
	rep := reportfinding.Report{Tools: []string{tool}}
	if bom.Vulnerabilities == nil {
		return rep, nil
	}
	for _, v := range *bom.Vulnerabilities {
		if strings.TrimSpace(v.ID) == "" || v.Affects == nil {
			continue
		}
		for _, a := range *v.Affects {
			c, ok := components[a.Ref]
			if !ok {
				continue
			}
			if name, _, _ := pkg(c); strings.TrimSpace(name) == "" {
				continue // names no package (as OSV's unnamed packages)
			}
			if len(rep.Findings) == norm.MaxFindings {
				return reportfinding.Report{}, &reporterr.TooLarge{What: "affected components", Limit: norm.MaxFindings}
			}
			rep.Findings = append(rep.Findings, convert(tool, v, a, c))
		}
	}
	return rep, nil
}

// index maps bom-refs to components, nested ones included.
func index(into map[string]cdx.Component, cs []cdx.Component) {
	for _, c := range cs {
		if c.BOMRef != "" {
			if _, dup := into[c.BOMRef]; !dup {
				into[c.BOMRef] = c
			}
		}
		if c.Components != nil {
			index(into, *c.Components)
		}
	}
}

// toolName is the first tool the metadata names (1.5+ tool components or
// services, or the legacy tool list), in lower case, else "cyclonedx".
func toolName(bom cdx.BOM) string {
	if bom.Metadata == nil || bom.Metadata.Tools == nil {
		return Tool
	}
	t := bom.Metadata.Tools
	var names []string
	if t.Components != nil {
		for _, c := range *t.Components {
			names = append(names, c.Name)
		}
	}
	if t.Services != nil {
		for _, s := range *t.Services {
			names = append(names, s.Name)
		}
	}
	if t.Tools != nil {
		for _, tl := range *t.Tools {
			names = append(names, tl.Name)
		}
	}
	for _, n := range names {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			return norm.ClipID(n)
		}
	}
	return Tool
}

func convert(tool string, v cdx.Vulnerability, a cdx.Affects, c cdx.Component) reportfinding.Finding {
	name, version, ecosystem := pkg(c)
	var refs, advisories []string
	if v.References != nil {
		for _, r := range *v.References {
			refs = append(refs, r.ID)
		}
	}
	if v.Advisories != nil {
		for _, adv := range *v.Advisories {
			advisories = append(advisories, advisoryIDs.FindAllString(adv.URL+" "+adv.Title, -1)...)
		}
	}
	d := &reportfinding.Dependency{
		Name: norm.ClipID(name), Version: norm.ClipID(version), Ecosystem: norm.ClipID(ecosystem),
		Summary: norm.Clip(strings.TrimSpace(v.Description)), Details: norm.Clip(strings.TrimSpace(v.Detail)),
		FixVersion:   norm.ClipID(fixVersion(v, a, version)),
		Reachability: reportfinding.Reachability{Status: reportfinding.NotAnalyzed},
	}
	d.IDs, d.CVE = osv.IDs([]string{v.ID}, refs, advisories)
	d.CVSS, d.Severity = rating(v)
	f := osv.SCAFinding(tool, d)
	if v.CWEs != nil {
		for _, id := range *v.CWEs {
			if id > 0 {
				f.CWE = id
				break
			}
		}
	}
	return f
}

// advisoryIDs finds CVE and GHSA ids in advisory URLs and titles.
var advisoryIDs = regexp.MustCompile(`CVE-\d{4}-\d{4,}|GHSA(-[23456789cfghjmpqrvwx]{4}){3}`)

// purlEcosystem names a package URL type as OSV names its ecosystem.
var purlEcosystem = map[string]string{
	"npm": "npm", "pypi": "PyPI", "maven": "Maven", "golang": "Go", "cargo": "crates.io", "gem": "RubyGems",
	"nuget": "NuGet", "composer": "Packagist", "hex": "Hex", "pub": "Pub", "deb": "Debian", "apk": "Alpine",
	"rpm": "RPM", "cocoapods": "CocoaPods", "swift": "SwiftURL", "conan": "ConanCenter", "conda": "conda",
	"github": "GitHub Actions",
}

// pkg names a component by its package URL (Maven's group:artifact, a
// namespace/name elsewhere), else by its own name and version.
func pkg(c cdx.Component) (name, version, ecosystem string) {
	name, version = c.Name, c.Version
	if c.Group != "" {
		name = c.Group + "/" + c.Name
	}
	p, err := packageurl.FromString(c.PackageURL)
	if err != nil {
		return name, version, ""
	}
	ecosystem = purlEcosystem[p.Type]
	if ecosystem == "" {
		ecosystem = p.Type
	}
	switch {
	case p.Type == "maven" && p.Namespace != "":
		name = p.Namespace + ":" + p.Name
	case p.Namespace != "" && p.Type != "deb" && p.Type != "apk" && p.Type != "rpm":
		// deb/apk/rpm namespaces are the distribution, not part of the name.
		name = p.Namespace + "/" + p.Name
	case p.Name != "":
		name = p.Name
	}
	if p.Version != "" {
		version = p.Version
	}
	if strings.TrimSpace(name) == "" {
		name = c.Name
	}
	return name, version, ecosystem
}

// fixVersion is the lowest version the affects entry marks unaffected
// above the installed one, else the version a recommendation names
// ("Upgrade x to version 1.2.3", Trivy's form).
func fixVersion(v cdx.Vulnerability, a cdx.Affects, installed string) string {
	best := ""
	if a.Range != nil {
		for _, r := range *a.Range {
			if r.Status == cdx.VulnerabilityStatusNotAffected && r.Version != "" && osv.CompareVersions(r.Version, installed) > 0 &&
				(best == "" || osv.CompareVersions(r.Version, best) < 0) {
				best = r.Version
			}
		}
	}
	if best != "" {
		return best
	}
	rec := v.Recommendation
	if i := strings.LastIndex(strings.ToLower(rec), "version "); i >= 0 {
		fields := strings.FieldsFunc(rec[i+len("version "):], func(r rune) bool { return r == ' ' || r == ',' || r == ';' })
		if len(fields) > 0 {
			return strings.TrimSuffix(fields[0], ".")
		}
	}
	return ""
}

var severityRank = map[string]int{"LOW": 1, "MEDIUM": 2, "HIGH": 3, "CRITICAL": 4}

// rating reads the vulnerability's ratings: the CVSS score is the highest
// among CVSS ratings (their score, else computed from their vector); the
// severity the highest severity word any rating gives, else the score's
// rating, else UNSPECIFIED. Other methods (EPSS, SSVC, OWASP) are ignored
// for the score.
func rating(v cdx.Vulnerability) (float64, string) {
	var score float64
	word := ""
	if v.Ratings == nil {
		return 0, "UNSPECIFIED"
	}
	for _, r := range *v.Ratings {
		if w := norm.SeverityWord(string(r.Severity)); severityRank[w] > severityRank[word] {
			word = w
		}
		if !strings.HasPrefix(string(r.Method), "CVSSv") {
			continue
		}
		s := 0.0
		if r.Score != nil {
			s = *r.Score
		} else if c, ok := norm.CVSSScore(r.Vector); ok {
			s = c
		}
		if s > score && s <= 10 {
			score = s
		}
	}
	switch {
	case word != "":
		return score, word
	case score > 0:
		return score, norm.Severity(score)
	}
	return score, "UNSPECIFIED"
}
