package spdx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/reports/internal/wellformed"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

func fixture(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "calls.spdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// syft's SPDX 2.3 of govulncheck's testdata module example.com/calls: the
// scanned module (the root of the dependency graph) is left out; what it
// depends on is direct, the rest transitive; licences concluded.
func TestInventoryOfSyftSBOM(t *testing.T) {
	rep := wellformed.Fixture(t, Parse, "calls.spdx.json")
	if len(rep.Findings) != 0 || len(rep.Tools) != 1 || rep.Tools[0] != Tool {
		t.Fatalf("report: %+v", rep)
	}
	inv, err := Inventory(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ rel, licence string }{
		"pkg:golang/github.com/tidwall/gjson@v1.6.0":     {components.Direct, "MIT"},
		"pkg:golang/golang.org/x/text@v0.3.5":            {components.Direct, "BSD-3-Clause"},
		"pkg:golang/github.com/tidwall/match@v1.0.1":     {components.Transitive, "MIT"},
		"pkg:golang/github.com/tidwall/pretty@v1.0.0":    {components.Transitive, "MIT"},
		"pkg:golang/github.com/stretchr/testify@v1.12.1": {components.Transitive, "BSD-3-Clause AND ISC AND MIT"},
		"pkg:golang/go.yaml.in/yaml/v3@v3.0.5":           {components.Transitive, "Apache-2.0 AND MIT"},
	}
	if len(inv.Components) != len(want) {
		t.Fatalf("%d components, want %d: %+v", len(inv.Components), len(want), inv.Components)
	}
	for _, c := range inv.Components {
		w, ok := want[c.PURL]
		if !ok || c.Relation != w.rel || len(c.Licenses) != 1 || c.Licenses[0] != w.licence || c.Ecosystem != "Go" {
			t.Errorf("%+v, want %+v", c, w)
		}
	}
}

func TestRefused(t *testing.T) {
	for name, body := range map[string]string{
		"empty":         ``,
		"not JSON":      `SPDXVersion: SPDX-2.3`,
		"no version":    `{"name":"x"}`,
		"SPDX 3":        `{"spdxVersion":"SPDX-3.0"}`,
		"version type":  `{"spdxVersion":2.3}`,
		"packages type": `{"spdxVersion":"SPDX-2.3","packages":{}}`,
		"array":         `[]`,
	} {
		_, err := Inventory([]byte(body))
		var bad *reporterr.Invalid
		if !errors.As(err, &bad) {
			t.Errorf("%s: %v, want Invalid", name, err)
		}
	}
}

// FuzzParse: any input parses into a well-formed (empty) report or one
// of the typed errors, and its components are canonical.
func FuzzParse(f *testing.F) {
	f.Add(fixture(f))
	f.Add([]byte(`{"spdxVersion":"SPDX-2.2","packages":[{"SPDXID":"SPDXRef-a","name":"a","externalRefs":[{"referenceCategory":"PACKAGE-MANAGER","referenceType":"purl","referenceLocator":"pkg:npm/a@1.0.0"}]}]}`))
	wellformed.Fuzz(f, Parse)
}

func FuzzInventory(f *testing.F) {
	f.Add(fixture(f))
	f.Add([]byte(`{"spdxVersion":"SPDX-2.3","packages":[{"SPDXID":"SPDXRef-a","name":"a","versionInfo":"1","externalRefs":[{"referenceType":"purl","referenceLocator":"pkg:pypi/A_b"}]}],` +
		`"relationships":[{"spdxElementId":"SPDXRef-a","relationshipType":"DEPENDS_ON","relatedSpdxElement":"SPDXRef-b"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, err := Inventory(data)
		if err != nil {
			var bad *reporterr.Invalid
			var big *reporterr.TooLarge
			if !errors.As(err, &bad) && !errors.As(err, &big) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		for _, c := range inv.Components {
			p, err := components.ParsePURL(c.PURL)
			if err != nil || p.String() != c.PURL || p.Package() != c.Package || c.Version == "" {
				t.Fatalf("not canonical: %+v (%v)", c, err)
			}
		}
	})
}
