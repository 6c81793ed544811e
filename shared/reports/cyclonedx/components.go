package cyclonedx

import (
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

// Inventory reads a CycloneDX JSON document's components (nested ones
// included; those without a package URL and the described component
// itself are left out) with their licences (declared, else the evidence's:
// detected ones), and the advisories its
// vulnerabilities bring. A component the described component depends on
// (the dependency graph from metadata.component) is direct, another in
// the graph transitive; without a graph the relation is unknown.
func Inventory(data []byte) (components.Inventory, error) {
	var bom cdx.BOM
	if err := reporterr.Unmarshal(format, data, &bom); err != nil {
		return components.Inventory{}, err
	}
	if bom.BOMFormat != cdx.BOMFormat {
		return components.Inventory{}, reporterr.Invalidf(format, `"bomFormat" must be %q`, cdx.BOMFormat)
	}
	byRef := map[string]cdx.Component{}
	if bom.Components != nil {
		index(byRef, *bom.Components)
	}
	rel := relations(bom)
	var set components.Set
	made := map[string]components.Component{}
	var add func(cs []cdx.Component) error
	add = func(cs []cdx.Component) error {
		for _, c := range cs {
			if c.Components != nil {
				if err := add(*c.Components); err != nil {
					return err
				}
			}
			if c.PackageURL == "" {
				continue
			}
			r := rel(c.BOMRef)
			ls := licenses(c.Licenses)
			if len(ls) == 0 && c.Evidence != nil { // detected rather than declared (cyclonedx-gomod's)
				ls = licenses(c.Evidence.Licenses)
			}
			comp, err := components.New(c.PackageURL, c.Version, r, ls)
			if err != nil {
				continue
			}
			if !set.Add(comp) {
				return &reporterr.TooLarge{What: "components", Limit: components.MaxComponents}
			}
			if c.BOMRef != "" {
				made[c.BOMRef] = comp
			}
		}
		return nil
	}
	if bom.Components != nil {
		if err := add(*bom.Components); err != nil {
			return components.Inventory{}, err
		}
	}
	return components.Inventory{Components: set.List(), Advisories: advisories(bom, made)}, nil
}

// relations answers a bom-ref's relation from the dependency graph.
func relations(bom cdx.BOM) func(ref string) string {
	if bom.Dependencies == nil || len(*bom.Dependencies) == 0 || bom.Metadata == nil || bom.Metadata.Component == nil || bom.Metadata.Component.BOMRef == "" {
		return func(string) string { return components.Unknown }
	}
	root := bom.Metadata.Component.BOMRef
	direct, inGraph := map[string]bool{}, map[string]bool{}
	for _, d := range *bom.Dependencies {
		inGraph[d.Ref] = true
		if d.Dependencies == nil {
			continue
		}
		for _, to := range *d.Dependencies {
			inGraph[to] = true
			if d.Ref == root {
				direct[to] = true
			}
		}
	}
	return func(ref string) string {
		switch {
		case direct[ref]:
			return components.Direct
		case inGraph[ref]:
			return components.Transitive
		}
		return components.Unknown
	}
}

// licenses are a component's licence ids, names or expressions.
func licenses(ls *cdx.Licenses) []string {
	if ls == nil {
		return nil
	}
	var out []string
	for _, l := range *ls {
		switch {
		case l.Expression != "":
			out = append(out, l.Expression)
		case l.License != nil && l.License.ID != "":
			out = append(out, l.License.ID)
		case l.License != nil && l.License.Name != "":
			out = append(out, l.License.Name)
		}
	}
	return out
}

// advisories are the document's vulnerabilities per affected component:
// the versions its affects entries mark affected (ranges in the vers
// notation are not read), else the component's own version.
func advisories(bom cdx.BOM, made map[string]components.Component) []components.Advisory {
	if bom.Vulnerabilities == nil {
		return nil
	}
	var out []components.Advisory
	for _, v := range *bom.Vulnerabilities {
		if strings.TrimSpace(v.ID) == "" || v.Affects == nil {
			continue
		}
		var aliases []string
		if v.References != nil {
			for _, r := range *v.References {
				aliases = append(aliases, r.ID)
			}
		}
		for _, a := range *v.Affects {
			c, ok := made[a.Ref]
			if !ok {
				continue
			}
			adv := components.Advisory{ID: v.ID, Aliases: aliases, Package: c.Package, Ecosystem: c.Ecosystem}
			if a.Range != nil {
				for _, r := range *a.Range {
					if r.Version != "" && r.Status != cdx.VulnerabilityStatusNotAffected {
						adv.Versions = append(adv.Versions, r.Version)
					}
				}
			}
			if len(adv.Versions) == 0 {
				adv.Versions = []string{c.Version}
			}
			out = append(out, adv)
		}
	}
	return components.MergeAdvisories(out)
}
