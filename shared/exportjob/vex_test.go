package exportjob_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/exports"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
)

// vexSchema is the CycloneDX 1.6 schema (with the schemas it refers to)
// that shared/exportformat keeps, formats asserted.
func vexSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	const base = "http://cyclonedx.org/schema/"
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, name := range []string{"bom-1.6.schema.json", "spdx.schema.json", "jsf-0.82.schema.json"} {
		f, err := os.Open("../exportformat/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(base+name, doc); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile(base + "bom-1.6.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A VEX export is a project's SCA findings (no other project's) as a
// CycloneDX VEX document that validates against the CycloneDX schema,
// each finding's analysis from its status and reachability.
func TestVEXExportValidates(t *testing.T) {
	w := newWorld(t, 5)
	w.run(t)
	ctx := context.Background()
	web, lib := w.projects[0], w.projects[1]
	put := func(p schema.Project, id, name, status, reach string, ids ...string) {
		t.Helper()
		_, err := w.env.Store.SCA.PutSCAIssue(ctx, w.company.ID, sca.Issue{ID: id, ProjectID: p.ID, Branch: "main", Tool: "osv-scanner",
			IDs: ids, Description: "Vulnerable " + name, Severity: "HIGH", Classification: ids[0], Status: status,
			Package:      sca.Package{Name: name, Version: "1.0.0", Ecosystem: "Go", FixVersion: "1.0.1"},
			Location:     sca.Location{Path: "go.mod"},
			Reachability: sca.Reachability{Status: reach}})
		if err != nil {
			t.Fatal(err)
		}
	}
	put(web, "11111111-1111-4111-8111-111111111111", "golang.org/x/net", "open", "reachable", "GO-2024-2687", "CVE-2023-45288")
	put(web, "22222222-2222-4222-8222-222222222222", "github.com/gin-gonic/gin", "fixed", "package_imported", "GHSA-h395-qcrw-5vmq")
	put(web, "33333333-3333-4333-8333-333333333333", "gopkg.in/yaml.v3", "false_positive", "not_analyzed", "CVE-2022-28948")
	put(lib, "44444444-4444-4444-8444-444444444444", "golang.org/x/crypto", "open", "reachable", "CVE-2024-45337")

	a := w.wait(t, w.company.Admin, w.create(t, w.company.Admin, `{"format":"vex","filters":{"project":"WEB"}}`).Export.ID)
	if a.Export.Status != exports.Done || *a.Export.Rows != 3 {
		t.Fatalf("VEX export %+v", a.Export)
	}
	doc := download(t, a)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := vexSchema(t).Validate(inst); err != nil {
		t.Fatalf("VEX document invalid: %v\n%s", err, doc)
	}
	var bom struct {
		SerialNumber string `json:"serialNumber"`
		Metadata     struct {
			Component struct{ Name string } `json:"component"`
		} `json:"metadata"`
		Vulnerabilities []struct {
			BOMRef   string `json:"bom-ref"`
			ID       string `json:"id"`
			Analysis struct {
				State string `json:"state"`
			} `json:"analysis"`
		} `json:"vulnerabilities"`
	}
	if err := json.Unmarshal(doc, &bom); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range bom.Vulnerabilities {
		got[v.ID] = v.Analysis.State
	}
	want := map[string]string{"CVE-2023-45288": "in_triage", "GHSA-h395-qcrw-5vmq": "resolved", "CVE-2022-28948": "false_positive"}
	if len(got) != len(want) || bom.Metadata.Component.Name != "Web" || bom.SerialNumber != "urn:uuid:"+a.Export.ID {
		t.Fatalf("VEX: %v, subject %q, serial %s", got, bom.Metadata.Component.Name, bom.SerialNumber)
	}
	for id, st := range want {
		if got[id] != st {
			t.Errorf("%s: state %q, want %q", id, got[id], st)
		}
	}
	if res := testenv.Do(t, w.h, "POST", "/exports", `{"format":"vex","filters":{"project":"Nope"}}`, testenv.Key(w.company.Admin)...); res.Status != http.StatusOK {
		t.Fatalf("VEX of an unknown project: %d %s", res.Status, res.Body)
	}
}
