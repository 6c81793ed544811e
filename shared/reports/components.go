package reports

import (
	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/reports/cyclonedx"
	"github.com/acme/codescan-api/shared/reports/govulncheck"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/reports/osv"
	"github.com/acme/codescan-api/shared/reports/spdx"
)

// inventories read the components (and the advisories) of the formats
// that list them: SBOMs (CycloneDX, SPDX) and the SCA scanners' package
// lists (govulncheck's SBOM message, OSV-Scanner's packages).
var inventories = map[string]func([]byte) (components.Inventory, error){
	CycloneDX:   cyclonedx.Inventory,
	SPDX:        spdx.Inventory,
	Govulncheck: govulncheck.Inventory,
	OSVScanner:  osv.Inventory,
}

// ListsComponents reports whether the engine's reports list components.
func ListsComponents(engine string) bool {
	e, ok := Canonical(engine)
	_, lists := inventories[e]
	return ok && lists
}

// Components reads the components an upload of the engine lists, and the
// advisories it brings for them; a format that lists none answers an
// empty inventory. Its errors are Parse's (InvalidError, TooLargeError,
// UnknownEngineError). Component names come from package URLs, canonical
// and bounded (shared/components), so they need no text rule.
func Components(engine string, data []byte) (components.Inventory, error) {
	e, ok := Canonical(engine)
	if !ok {
		return components.Inventory{}, &UnknownEngineError{Engine: engine}
	}
	read, lists := inventories[e]
	if !lists {
		return components.Inventory{Components: []components.Component{}}, nil
	}
	inv, err := read(data)
	if err != nil {
		return components.Inventory{}, err
	}
	safe(&inv)
	return inv, nil
}

// safe applies the edge's text rule to what the report names freely:
// licence texts and advisory ids (a package URL is canonical already).
func safe(inv *components.Inventory) {
	for i := range inv.Components {
		c := &inv.Components[i]
		for j, l := range c.Licenses {
			c.Licenses[j] = cleantext.Visible(l)
		}
	}
	for i := range inv.Advisories {
		a := &inv.Advisories[i]
		a.ID = cleantext.Visible(norm.ClipID(a.ID))
		var aliases []string
		for _, x := range a.Aliases {
			if x = cleantext.Visible(norm.ClipID(x)); x != "" {
				aliases = append(aliases, x)
			}
		}
		a.Aliases = aliases
	}
}
