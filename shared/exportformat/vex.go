package exportformat

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/uuid"
	packageurl "github.com/package-url/packageurl-go"
)

// vexSpecVersion is the CycloneDX version written: 1.6 is the newest that
// the common consumers (Dependency-Track, Trivy, Grype) all read.
const vexSpecVersion = "1.6"

// projectRef is the bom-ref of the document's subject.
const projectRef = "project"

// analysis is a triage status's VEX analysis (see the package doc).
type analysis struct {
	state    cdx.ImpactAnalysisState
	response cdx.ImpactAnalysisResponse
	omit     bool
}

var analyses = map[string]analysis{
	"open":            {state: cdx.IASInTriage},
	"fix_in_progress": {state: cdx.IASExploitable, response: cdx.IARUpdate},
	"accepted_risk":   {state: cdx.IASExploitable, response: cdx.IARWillNotFix},
	"fixed":           {state: cdx.IASResolved},
	"false_positive":  {state: cdx.IASFalsePositive},
	"suppressed":      {state: cdx.IASNotAffected},
	"duplicate":       {omit: true},
}

// writeVEX writes the findings that name a package as a CycloneDX VEX
// document; the others are skipped. The vulnerabilities stream; the
// components (one per distinct package URL) are gathered and written after
// them.
func writeVEX(w *bufio.Writer, src Source, opt Options) (int, error) {
	serial := opt.Serial
	if serial == "" {
		serial = uuid.NewString()
	} else if _, err := uuid.Parse(serial); err != nil {
		return 0, fmt.Errorf("export: VEX serial %q is not a uuid", serial)
	}
	at := opt.Time
	if at.IsZero() {
		at = time.Now()
	}
	meta := cdx.Metadata{
		Timestamp: at.UTC().Format(time.RFC3339),
		Tools:     &cdx.ToolsChoice{Components: &[]cdx.Component{{Type: cdx.ComponentTypeApplication, Name: "codescan-api"}}},
		Component: &cdx.Component{BOMRef: projectRef, Type: cdx.ComponentTypeApplication, Name: cmp.Or(opt.Project, "project")},
	}
	mb, err := json.Marshal(meta)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(w, `{"$schema":"http://cyclonedx.org/schema/bom-%s.schema.json","bomFormat":"CycloneDX","specVersion":%q,"serialNumber":"urn:uuid:%s","version":1,"metadata":%s,"vulnerabilities":[`,
		vexSpecVersion, vexSpecVersion, serial, mb)
	components := map[string]cdx.Component{}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	err = src(func(r Row) error {
		if r.Package == "" {
			return nil
		}
		a, ok := analyses[r.Status]
		if !ok {
			return fmt.Errorf("export: finding %s: unknown status %q", r.ID, r.Status)
		}
		if a.omit {
			return nil
		}
		c := component(r)
		if _, ok := components[c.BOMRef]; !ok {
			components[c.BOMRef] = c
		}
		if n > 0 {
			w.WriteByte(',')
		}
		if err := enc.Encode(vulnerability(r, a, c.BOMRef)); err != nil {
			return err
		}
		n++
		return nil
	})
	if err != nil {
		return n, err
	}
	w.WriteString(`],"components":[`)
	refs := make([]string, 0, len(components))
	for ref := range components {
		refs = append(refs, ref)
	}
	slices.Sort(refs)
	for i, ref := range refs {
		if i > 0 {
			w.WriteByte(',')
		}
		if err := enc.Encode(components[ref]); err != nil {
			return n, err
		}
	}
	w.WriteString("]}\n")
	return n, nil
}

func vulnerability(r Row, a analysis, ref string) cdx.Vulnerability {
	ids := r.Advisories
	primary := slices.IndexFunc(ids, func(id string) bool { return strings.HasPrefix(id, "CVE-") })
	if primary < 0 {
		primary = 0
	}
	v := cdx.Vulnerability{BOMRef: r.ID, ID: cmp.Or(r.Rule, r.ID), Description: r.Title,
		Affects: &[]cdx.Affects{{Ref: ref}}}
	if len(ids) > 0 {
		v.ID = ids[primary]
		v.Source = advisorySource(v.ID)
		var refs []cdx.VulnerabilityReference
		for i, id := range ids {
			if i != primary && id != v.ID {
				refs = append(refs, cdx.VulnerabilityReference{ID: id, Source: advisorySource(id)})
			}
		}
		if refs != nil {
			v.References = &refs
		}
	}
	if r.CWE > 0 {
		v.CWEs = &[]int{r.CWE}
	}
	if r.FixedVersion != "" {
		v.Recommendation = fmt.Sprintf("Upgrade %s to %s or later.", r.Package, r.FixedVersion)
	}
	an := &cdx.VulnerabilityAnalysis{State: a.state, Detail: r.StatusReason,
		FirstIssued: stamp(r.FirstSeen), LastUpdated: stamp(r.LastSeen)}
	if a.response != "" {
		an.Response = &[]cdx.ImpactAnalysisResponse{a.response}
	}
	if a.state == cdx.IASNotAffected && r.Reachable != nil && !*r.Reachable {
		an.Justification = cdx.IAJCodeNotReachable
	}
	v.Analysis = an
	props := []cdx.Property{{Name: "codescan:status", Value: r.Status}}
	add := func(name, value string) {
		if value != "" {
			props = append(props, cdx.Property{Name: name, Value: value})
		}
	}
	add("codescan:urgency", r.Urgency)
	add("codescan:branch", r.Branch)
	add("codescan:manifest", r.Path)
	if r.Reachable != nil {
		add("codescan:reachable", strconv.FormatBool(*r.Reachable))
	}
	if x := r.Exploit; x != nil {
		add("codescan:kev", strconv.FormatBool(x.KEV != nil))
		if k := x.KEV; k != nil {
			add("codescan:kev:date_added", k.DateAdded)
			add("codescan:kev:due_date", k.DueDate)
			add("codescan:kev:known_ransomware_use", strconv.FormatBool(k.KnownRansomwareUse))
		}
		if e := x.EPSS; e != nil {
			add("codescan:epss:score", strconv.FormatFloat(e.Score, 'f', -1, 64))
			add("codescan:epss:percentile", strconv.FormatFloat(e.Percentile, 'f', -1, 64))
			add("codescan:epss:date", e.Date)
		}
	}
	v.Properties = &props
	return v
}

// advisorySource names the database an advisory id comes from.
func advisorySource(id string) *cdx.Source {
	switch {
	case strings.HasPrefix(id, "CVE-"):
		return &cdx.Source{Name: "NVD", URL: "https://nvd.nist.gov/vuln/detail/" + id}
	case strings.HasPrefix(id, "GHSA-"):
		return &cdx.Source{Name: "GitHub", URL: "https://github.com/advisories/" + id}
	}
	return &cdx.Source{Name: "OSV", URL: "https://osv.dev/vulnerability/" + id}
}

// purlTypes maps OSV ecosystem names to package URL types.
var purlTypes = map[string]string{
	"Go": "golang", "npm": "npm", "PyPI": "pypi", "Maven": "maven", "crates.io": "cargo", "RubyGems": "gem",
	"NuGet": "nuget", "Packagist": "composer", "Hex": "hex", "Pub": "pub", "CocoaPods": "cocoapods",
	"ConanCenter": "conan", "conda": "conda", "SwiftURL": "swift", "GitHub Actions": "github",
}

// component is the finding's package as a CycloneDX library, named by its
// package URL (type "generic" for an ecosystem without one).
func component(r Row) cdx.Component {
	typ := cmp.Or(purlTypes[r.Ecosystem], packageurl.TypeGeneric)
	namespace, name := "", r.Package
	switch typ {
	case packageurl.TypeMaven:
		if g, a, ok := strings.Cut(r.Package, ":"); ok {
			namespace, name = g, a
		}
	case packageurl.TypeGolang, packageurl.TypeNPM, packageurl.TypeComposer, packageurl.TypeGithub, packageurl.TypeSwift:
		if i := strings.LastIndexByte(r.Package, '/'); i > 0 {
			namespace, name = r.Package[:i], r.Package[i+1:]
		}
	}
	purl := packageurl.NewPackageURL(typ, namespace, name, r.Version, nil, "").ToString()
	return cdx.Component{BOMRef: purl, Type: cdx.ComponentTypeLibrary, Group: namespace, Name: name,
		Version: r.Version, PackageURL: purl}
}
