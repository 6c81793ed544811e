package vex_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/exportformat"
	"github.com/acme/codescan-api/shared/vex"
)

// Our own VEX export (shared/exportformat, CycloneDX 1.6) reads back: it passes
// the schema, every exported finding is matched by its own statement
// through the component's purl, and importing it into the findings it came
// from changes nothing (each is already as its statement says, or a
// status the import keeps).
func TestOwnExportImportsBackUnchanged(t *testing.T) {
	t.Parallel()
	rows := []exportformat.Row{
		{ID: "11111111-1111-4111-8111-111111111111", Tool: "osv-scanner", Status: "open", Package: "golang.org/x/net", Ecosystem: "Go", Version: "v0.7.0",
			Advisories: []string{"GO-2023-2102", "CVE-2023-44487", "GHSA-qppj-fm5r-hxr3"}},
		{ID: "22222222-2222-4222-8222-222222222222", Tool: "osv-scanner", Status: "false_positive", StatusReason: "not used", Package: "pyyaml", Ecosystem: "PyPI", Version: "5.3",
			Advisories: []string{"CVE-2020-14343"}},
		{ID: "33333333-3333-4333-8333-333333333333", Tool: "osv-scanner", Status: "fixed", Package: "org.apache.logging.log4j:log4j-core", Ecosystem: "Maven", Version: "2.14.1",
			Advisories: []string{"CVE-2021-44228", "GHSA-jfh8-c2jp-5v3q"}},
		{ID: "44444444-4444-4444-8444-444444444444", Tool: "osv-scanner", Status: "accepted_risk", Package: "lodash", Ecosystem: "npm", Version: "4.17.20",
			Advisories: []string{"GHSA-35jh-r3h4-6jhm", "CVE-2021-23337"}},
	}
	var buf bytes.Buffer
	src := func(yield func(exportformat.Row) error) error {
		for _, r := range rows {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := exportformat.Write(&buf, exportformat.VEX, src, exportformat.Options{Project: "web", Time: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Serial: "0b3b0b7e-5f0c-4c1e-9d44-7a3c8f1e2d10"}); err != nil {
		t.Fatal(err)
	}
	doc := mustParse(t, buf.Bytes(), "")
	if doc.ID != "urn:uuid:0b3b0b7e-5f0c-4c1e-9d44-7a3c8f1e2d10/1" || doc.SpecVersion != "1.6" || len(doc.Statements) != len(rows) {
		t.Fatalf("document %s %s, %d statements", doc.ID, doc.SpecVersion, len(doc.Statements))
	}
	idx := vex.NewIndex(doc)
	for _, r := range rows {
		f := vex.Finding{ID: r.ID, Advisories: r.Advisories, Ecosystem: r.Ecosystem, Name: r.Package, Version: r.Version, Status: r.Status, Reason: r.StatusReason}
		o, ok := idx.Decide(f)
		if !ok || o.Result == vex.Changed || o.To != r.Status {
			t.Errorf("%s (%s): %+v", r.Package, r.Status, o)
		}
	}
}
