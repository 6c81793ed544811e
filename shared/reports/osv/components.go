package osv

import (
	"strings"

	"github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

// Inventory reads the packages OSV-Scanner lists (results[].packages[],
// each with its ecosystem, name and version) as components, and the
// advisories it reports for them. OSV-Scanner does not tell direct from
// transitive dependencies: their relation is unknown.
func Inventory(data []byte) (components.Inventory, error) {
	var out output
	if err := reporterr.Unmarshal(format, data, &out); err != nil {
		return components.Inventory{}, err
	}
	if out.Results == nil {
		return components.Inventory{}, reporterr.Invalidf(format, `missing "results"`)
	}
	var set components.Set
	var advisories []components.Advisory
	for _, res := range *out.Results {
		if res.Packages == nil {
			continue
		}
		for _, p := range *res.Packages {
			c, err := components.FromEcosystem(p.Package.Ecosystem, p.Package.Name, p.Package.Version, components.Unknown)
			if err != nil {
				continue // an ecosystem without package URLs, or no version
			}
			if !set.Add(c) {
				return components.Inventory{}, &reporterr.TooLarge{What: "components", Limit: components.MaxComponents}
			}
			advisories = append(advisories, Advisories(c, p.Package.Name, p.Vulnerabilities)...)
		}
	}
	return components.Inventory{Components: set.List(), Advisories: components.MergeAdvisories(advisories)}, nil
}

// Advisories are the entries' affected ranges and versions for the
// package name of component c.
func Advisories(c components.Component, name string, entries []Entry) []components.Advisory {
	var out []components.Advisory
	for _, e := range entries {
		if strings.TrimSpace(e.ID) == "" {
			continue
		}
		a := components.Advisory{ID: e.ID, Aliases: e.Aliases, Package: c.Package, Ecosystem: c.Ecosystem}
		for _, af := range e.Affected {
			if af.Package.Name != "" && af.Package.Name != name {
				continue
			}
			a.Versions = append(a.Versions, af.Versions...)
			for _, r := range af.Ranges {
				if strings.EqualFold(r.Type, "GIT") {
					continue
				}
				var evs []components.Event
				for _, ev := range r.Events {
					evs = append(evs, components.Event{Introduced: ev.Introduced, Fixed: ev.Fixed, LastAffected: ev.LastAffected})
				}
				a.Ranges = append(a.Ranges, evs)
			}
		}
		if len(a.Ranges) == 0 && len(a.Versions) == 0 {
			a.Versions = []string{c.Version} // the report says this version is affected
		}
		out = append(out, a)
	}
	return out
}
