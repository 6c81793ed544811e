package reports

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/components"
)

// byPURL indexes an inventory's components.
func byPURL(inv components.Inventory) map[string]components.Component {
	out := map[string]components.Component{}
	for _, c := range inv.Components {
		out[c.PURL] = c
	}
	return out
}

func inventory(t *testing.T, engine string, parts ...string) components.Inventory {
	t.Helper()
	inv, err := Components(engine, fixture(t, parts...))
	if err != nil {
		t.Fatalf("%s %v: %v", engine, parts, err)
	}
	return inv
}

// The module graph of govulncheck's testdata module example.com/calls, as
// cyclonedx-gomod v1.10.0, syft v1.57.1 and govulncheck v1.9.0 report it:
// the same package URLs (syft adds the go.sum-only testify and yaml); the
// SBOMs tell direct from transitive alike and give licences.
func TestSameModuleGraphFromTwoGenerators(t *testing.T) {
	sbom := byPURL(inventory(t, "cyclonedx", "testdata", "components", "calls.cdx.json"))
	spdx := byPURL(inventory(t, "spdx", "spdx", "testdata", "calls.spdx.json"))
	vuln := byPURL(inventory(t, "govulncheck", "govulncheck", "testdata", "calls.json"))
	want := map[string]string{
		"pkg:golang/github.com/tidwall/gjson@v1.6.0":  components.Direct,
		"pkg:golang/golang.org/x/text@v0.3.5":         components.Direct,
		"pkg:golang/github.com/tidwall/match@v1.0.1":  components.Transitive,
		"pkg:golang/github.com/tidwall/pretty@v1.0.0": components.Transitive,
	}
	if len(sbom) != len(want) {
		t.Errorf("SBOM: %d components, want %d: %v", len(sbom), len(want), sbom)
	}
	for purl, rel := range want {
		c, ok := sbom[purl]
		if !ok || c.Relation != rel || c.Ecosystem != "Go" || c.Package != purl[:strings.LastIndex(purl, "@")] {
			t.Errorf("SBOM %s: %+v, want relation %s", purl, c, rel)
		}
		if s, ok := spdx[purl]; !ok || s.Relation != rel {
			t.Errorf("SPDX %s: %+v, want relation %s", purl, s, rel)
		}
		if g, ok := vuln[purl]; !ok || g.Relation != components.Unknown {
			t.Errorf("govulncheck %s: %+v", purl, g)
		}
	}
	if !slices.Equal(sbom["pkg:golang/github.com/tidwall/gjson@v1.6.0"].Licenses, []string{"MIT"}) {
		t.Errorf("gjson's licence: %v", sbom["pkg:golang/github.com/tidwall/gjson@v1.6.0"].Licenses)
	}
	if _, ok := vuln["pkg:golang/stdlib@v1.26.8"]; !ok || len(vuln) != len(want)+1 {
		t.Errorf("govulncheck: the standard library and the four modules, got %v", vuln)
	}
}

// govulncheck's OSV records become advisories of the modules it lists,
// with their ranges: gjson v1.6.0 lies in GO-2021-0054 (fixed 1.6.6),
// x/text v0.3.5 outside GO-2020-0015 (fixed 0.3.3).
func TestAdvisoriesCarryRanges(t *testing.T) {
	inv := inventory(t, "govulncheck", "govulncheck", "testdata", "calls.json")
	got := map[string]components.Advisory{}
	for _, a := range inv.Advisories {
		got[a.ID] = a
	}
	at := func(id, v string) bool {
		a, ok := got[id]
		if !ok {
			t.Fatalf("no advisory %s in %v", id, inv.Advisories)
		}
		ver, err := components.ParseVersion(a.Ecosystem, v)
		if err != nil {
			t.Fatal(err)
		}
		return a.Affects(ver)
	}
	if !at("GO-2021-0054", "v1.6.0") || at("GO-2021-0054", "v1.6.6") || at("GO-2020-0015", "v0.3.5") || !at("GO-2020-0015", "v0.3.2") {
		t.Error("ranges read wrong")
	}
	if a := got["GO-2021-0054"]; a.Package != "pkg:golang/github.com/tidwall/gjson" || !slices.Contains(a.Aliases, "CVE-2020-36067") {
		t.Errorf("GO-2021-0054: %+v", a)
	}
}

// OSV-Scanner's packages and CycloneDX vulnerabilities (Trivy).
func TestScannerPackageLists(t *testing.T) {
	osv := inventory(t, "osv-scanner", "osv", "testdata", "go-and-cargo.json")
	if _, ok := byPURL(osv)["pkg:cargo/regex@1.5.1"]; !ok || len(osv.Advisories) == 0 {
		t.Errorf("osv-scanner: %+v", osv)
	}
	trivy := inventory(t, "cyclonedx", "cyclonedx", "testdata", "trivy-pom.cdx.json")
	jd := byPURL(trivy)["pkg:maven/com.fasterxml.jackson.core/jackson-databind@2.9.1"]
	if jd.Ecosystem != "Maven" || len(trivy.Advisories) != 2 || trivy.Advisories[0].Versions[0] != "2.9.1" {
		t.Errorf("trivy: %+v", trivy)
	}
}

// Engines without components answer an empty inventory; unknown engines
// and broken documents are refused as Parse refuses them.
func TestComponentsRefuses(t *testing.T) {
	if inv, err := Components("semgrep", []byte(`{}`)); err != nil || len(inv.Components) != 0 || ListsComponents("semgrep") {
		t.Errorf("semgrep: %v %v", inv, err)
	}
	var unknown *UnknownEngineError
	if _, err := Components("nope", nil); !errors.As(err, &unknown) {
		t.Errorf("unknown engine: %v", err)
	}
	var bad *InvalidError
	for engine, body := range map[string]string{"spdx": `{"spdxVersion":"SPDX-3.0"}`, "cyclonedx": `{"bomFormat":"x"}`, "osv-scanner": `[]`, "govulncheck": `{"x":`} {
		if _, err := Components(engine, []byte(body)); !errors.As(err, &bad) {
			t.Errorf("%s %s: %v", engine, body, err)
		}
	}
}
