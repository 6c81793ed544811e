package reports

import (
	"errors"
	"testing"

	"github.com/acme/codescan-api/shared/components"
)

// FuzzComponents feeds every component reader (the engine picked by the
// first byte): a typed error or canonical components and advisories,
// never a panic.
func FuzzComponents(f *testing.F) {
	engines := []string{CycloneDX, SPDX, Govulncheck, OSVScanner}
	for i, parts := range [][]string{
		{"testdata", "components", "calls.cdx.json"},
		{"spdx", "testdata", "calls.spdx.json"},
		{"govulncheck", "testdata", "calls.json"},
		{"osv", "testdata", "go-and-cargo.json"},
	} {
		f.Add(append([]byte{byte(i)}, fixture(f, parts...)...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		inv, err := Components(engines[int(data[0])%len(engines)], data[1:])
		if err != nil {
			var bad *InvalidError
			var big *TooLargeError
			if !errors.As(err, &bad) && !errors.As(err, &big) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if len(inv.Components) > components.MaxComponents {
			t.Fatalf("%d components", len(inv.Components))
		}
		for _, c := range inv.Components {
			p, err := components.ParsePURL(c.PURL)
			if err != nil || p.String() != c.PURL || p.Package() != c.Package || c.Version == "" || len(c.Licenses) > components.MaxLicenses {
				t.Fatalf("not canonical: %+v (%v)", c, err)
			}
		}
		for _, a := range inv.Advisories {
			if a.ID == "" || a.Package == "" {
				t.Fatalf("advisory without id or package: %+v", a)
			}
		}
	})
}
