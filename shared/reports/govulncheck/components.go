package govulncheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/reports/osv"
	"github.com/acme/codescan-api/shared/reports/reporterr"
	"github.com/acme/codescan-api/shared/reports/sarif"
)

// sbomMessage is govulncheck's "SBOM" message (protocol v1.0.0): the
// modules of the scanned build, the scanned ones as roots.
type sbomMessage struct {
	SBOM *struct {
		Modules []struct {
			Path    string `json:"path"`
			Version string `json:"version"`
		} `json:"modules"`
		Roots []string `json:"roots"`
	} `json:"SBOM"`
	OSV *osv.Entry `json:"osv"`
}

// Inventory reads the modules govulncheck's JSON stream lists in its SBOM
// message as components (the scanned modules themselves, which have no
// version, are left out; the standard library is pkg:golang/stdlib), and
// the OSV records it reports for them as advisories. govulncheck does not
// tell direct from transitive requirements: their relation is unknown. Its
// SARIF output lists no modules.
func Inventory(data []byte) (components.Inventory, error) {
	if err := reporterr.Text(format, data); err != nil {
		return components.Inventory{}, err
	}
	if sarif.IsLog(data) {
		if _, err := parseSARIF(data); err != nil {
			return components.Inventory{}, err
		}
		return components.Inventory{Components: []components.Component{}}, nil
	}
	var set components.Set
	byModule := map[string]components.Component{}
	var entries []osv.Entry
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var m sbomMessage
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return components.Inventory{}, reporterr.DecodeJSON(format, err)
		}
		if m.OSV != nil && m.OSV.ID != "" {
			entries = append(entries, *m.OSV)
		}
		if m.SBOM == nil {
			continue
		}
		for _, mod := range m.SBOM.Modules {
			c, err := components.FromEcosystem("Go", mod.Path, mod.Version, components.Unknown)
			if err != nil {
				continue // a scanned module: no version
			}
			if !set.Add(c) {
				return components.Inventory{}, &reporterr.TooLarge{What: "components", Limit: components.MaxComponents}
			}
			byModule[mod.Path] = c
		}
	}
	var advisories []components.Advisory
	for _, e := range entries {
		seen := map[string]bool{}
		for _, af := range e.Affected {
			if c, ok := byModule[af.Package.Name]; ok && !seen[af.Package.Name] {
				seen[af.Package.Name] = true
				advisories = append(advisories, osv.Advisories(c, af.Package.Name, []osv.Entry{e})...)
			}
		}
	}
	return components.Inventory{Components: set.List(), Advisories: components.MergeAdvisories(advisories)}, nil
}
