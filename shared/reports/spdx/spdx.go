// Package spdx reads SPDX 2.x JSON documents (what `syft -o spdx-json`,
// Kubernetes' `bom` and GitHub's dependency graph export write) through
// the SPDX project's Go library (github.com/spdx/tools-golang): an SBOM
// has no findings, only components, each package that carries a package
// URL (an external reference of type purl).
package spdx

import (
	"bytes"
	"strings"

	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx"
	"github.com/spdx/tools-golang/spdx/v2/common"

	"github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

// Tool names an SPDX upload's (empty) findings.
const Tool = "spdx"

const format = "SPDX JSON"

// versions are the SPDX versions read (the library converts 2.1 and 2.2
// to 2.3).
var versions = []string{"SPDX-2.1", "SPDX-2.2", "SPDX-2.3"}

// Decode reads an SPDX 2.x JSON document.
func Decode(data []byte) (*spdx.Document, error) {
	var head struct {
		SPDXVersion *string `json:"spdxVersion"`
	}
	if err := reporterr.Unmarshal(format, data, &head); err != nil {
		return nil, err
	}
	switch {
	case head.SPDXVersion == nil:
		return nil, reporterr.Invalidf(format, `missing "spdxVersion"`)
	case !contains(versions, *head.SPDXVersion):
		return nil, reporterr.Invalidf(format, `"spdxVersion" must be one of %s`, strings.Join(versions, ", "))
	}
	doc, err := spdxjson.Read(bytes.NewReader(data))
	if err != nil {
		return nil, reporterr.DecodeJSON(format, err)
	}
	return doc, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Parse checks an SPDX document; it has no findings.
func Parse(data []byte) (reportfinding.Report, error) {
	if _, err := Decode(data); err != nil {
		return reportfinding.Report{}, err
	}
	return reportfinding.Report{Tools: []string{Tool}}, nil
}

// Inventory reads the document's packages that carry a package URL as
// components: the licence concluded, else declared; a package a root
// (a described package, or one on which nothing depends) DEPENDS_ON (or
// that is a DEPENDENCY_OF one) is direct, another in such relationships
// transitive, and without dependency relationships the relation is
// unknown. The roots themselves are left out.
func Inventory(data []byte) (components.Inventory, error) {
	doc, err := Decode(data)
	if err != nil {
		return components.Inventory{}, err
	}
	rel := relations(doc)
	var set components.Set
	for _, p := range doc.Packages {
		if p == nil {
			continue
		}
		if rel.roots[p.PackageSPDXIdentifier] {
			continue // the document's subject, not one of its components
		}
		purl := purlOf(p)
		if purl == "" {
			continue
		}
		c, err := components.New(purl, version(p), rel.of(p.PackageSPDXIdentifier), licences(p))
		if err != nil {
			continue
		}
		if !set.Add(c) {
			return components.Inventory{}, &reporterr.TooLarge{What: "components", Limit: components.MaxComponents}
		}
	}
	return components.Inventory{Components: set.List()}, nil
}

// version is the package's versionInfo unless it says it has none (the
// package URL's own version wins in components.New).
func version(p *spdx.Package) string {
	switch v := strings.TrimSpace(p.PackageVersion); strings.ToUpper(v) {
	case "", "UNKNOWN", "NOASSERTION", "NONE":
		return ""
	default:
		return v
	}
}

// purlOf is the package's first purl external reference.
func purlOf(p *spdx.Package) string {
	for _, r := range p.PackageExternalReferences {
		if r != nil && strings.EqualFold(r.RefType, "purl") {
			return r.Locator
		}
	}
	return ""
}

func licences(p *spdx.Package) []string {
	for _, l := range []string{p.PackageLicenseConcluded, p.PackageLicenseDeclared} {
		if l = strings.TrimSpace(l); l != "" && l != "NOASSERTION" && l != "NONE" {
			return []string{l}
		}
	}
	return nil
}

type graph struct {
	// roots are the described packages and the roots of the dependency
	// graph (what depends on others and nothing on it: a scanned module,
	// which syft lists beside the directory it describes).
	roots, direct, inGraph map[common.ElementID]bool
}

func (g graph) of(id common.ElementID) string {
	switch {
	case g.direct[id]:
		return components.Direct
	case g.inGraph[id]:
		return components.Transitive
	}
	return components.Unknown
}

// relations reads DESCRIBES (the document's own packages, also
// documentDescribes) and the dependency relationships.
func relations(doc *spdx.Document) graph {
	g := graph{roots: map[common.ElementID]bool{}, direct: map[common.ElementID]bool{}, inGraph: map[common.ElementID]bool{}}
	type edge struct{ from, to common.ElementID }
	var deps []edge
	for _, r := range doc.Relationships {
		if r == nil {
			continue
		}
		a, b := r.RefA.ElementRefID, r.RefB.ElementRefID
		switch strings.ToUpper(r.Relationship) {
		case "DESCRIBES":
			if a == "DOCUMENT" {
				g.roots[b] = true
			}
		case "DESCRIBED_BY":
			if b == "DOCUMENT" {
				g.roots[a] = true
			}
		case "DEPENDS_ON":
			deps = append(deps, edge{a, b})
		case "DEPENDENCY_OF":
			deps = append(deps, edge{b, a})
		}
	}
	depended := map[common.ElementID]bool{}
	for _, e := range deps {
		g.inGraph[e.from], g.inGraph[e.to] = true, true
		depended[e.to] = true
	}
	for _, e := range deps {
		if !depended[e.from] {
			g.roots[e.from] = true
		}
	}
	for _, e := range deps {
		if g.roots[e.from] {
			g.direct[e.to] = true
		}
	}
	return g
}
