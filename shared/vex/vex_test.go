package vex_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/vex"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustParse(t testing.TB, data []byte, format string) vex.Document {
	t.Helper()
	doc, err := vex.Parse(data, format)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return doc
}

// Real documents read as their authors wrote them: the format from the
// document, the id, every statement's status, ids and packages.
func TestRealDocumentsParse(t *testing.T) {
	t.Parallel()
	goVEX := mustParse(t, fixture(t, "openvex/go-vex-v0.2.0.json"), "")
	if goVEX.Format != vex.FormatOpenVEX || goVEX.SpecVersion != "v0.2.0" ||
		goVEX.ID != "https://openvex.dev/docs/public/vex-d4e9020b6d0d26f131d535e055902dd6ccf3e2088bce3079a8cd3588a4b14c78" {
		t.Fatalf("go-vex document: %s %s %s", goVEX.Format, goVEX.SpecVersion, goVEX.ID)
	}
	var statuses []string
	for _, st := range goVEX.Statements {
		statuses = append(statuses, st.Status)
		// The image's subcomponents, not the image, are the packages.
		if len(st.Packages) != 2 || st.Packages[0].Ecosystem != "Alpine" || st.Packages[0].Name != "libssl3" ||
			st.Packages[0].Version != "3.0.8-r3" || st.Packages[1].Name != "libcrypto3" || len(st.Unresolved) != 0 {
			t.Errorf("%s packages %+v unresolved %+v", st.Pointer, st.Packages, st.Unresolved)
		}
	}
	if got := strings.Join(statuses, ","); got != "fixed,fixed,fixed,not_affected,not_affected" {
		t.Errorf("statuses %s", got)
	}
	st := goVEX.Statements[3]
	if st.Pointer != "/statements/3" || st.Vulnerability != "CVE-2023-3446" || st.Justification != "vulnerable_code_not_present" ||
		st.Detail != "affected functions were removed before packaging" {
		t.Errorf("statement 3: %+v", st)
	}

	cdx := mustParse(t, fixture(t, "cyclonedx/vex.json"), "")
	if cdx.Format != vex.FormatCycloneDX || cdx.SpecVersion != "1.4" || !strings.HasPrefix(cdx.ID, "sha256:") || len(cdx.Statements) != 1 {
		t.Fatalf("CycloneDX document: %+v", cdx)
	}
	v := cdx.Statements[0]
	// The BOM-Link's fragment is the affected component's purl; the
	// reference's id is an alias.
	want := vex.Package{PURL: "pkg:maven/com.fasterxml.jackson.core/jackson-databind@2.10.0?type=jar", Ecosystem: "Maven",
		Name: "com.fasterxml.jackson.core:jackson-databind", Version: "2.10.0"}
	if v.Status != vex.NotAffected || v.Justification != "code_not_reachable" || len(v.Packages) != 1 || v.Packages[0] != want ||
		strings.Join(v.IDs, ",") != "CVE-2020-25649,SNYK-JAVA-COMFASTERXMLJACKSONCORE-1048302" || v.Action != "will_not_fix, update" {
		t.Errorf("CycloneDX statement: %+v", v)
	}

	// A product named by a bom-ref without a purl names no package; a
	// version range is not evaluated.
	cisa := mustParse(t, fixture(t, "cyclonedx/cisa-case-1-not_affected.json"), vex.FormatCycloneDX)
	if u := cisa.Statements[0].Unresolved; len(u) != 1 || u[0].Ref != "product-ABC" || len(cisa.Statements[0].Packages) != 0 {
		t.Errorf("CISA case 1: %+v", cisa.Statements[0])
	}
	cases5 := mustParse(t, fixture(t, "cyclonedx/use-case-5.json"), "")
	if len(cases5.Statements) != 2 || cases5.Statements[0].Status != vex.Affected || cases5.Statements[1].Status != vex.NotAffected {
		t.Errorf("use case 5: %+v", cases5.Statements)
	}
}

// Documents that fail their schema are refused naming the JSON pointer of
// the first failure (in pointer order: the same every time): real ones
// (OpenVEX's pre-0.2.0 form, vexctl's example with a member the schema
// does not know, a document without its timestamp and version) and
// edited ones.
func TestSchemaFailuresNameThePointer(t *testing.T) {
	t.Parallel()
	cdx := string(fixture(t, "cyclonedx/vex.json"))
	for _, tc := range []struct {
		name, doc, field, problem string
	}{
		{"go-vex v0.0.1", string(fixture(t, "openvex/go-vex-v0.0.1.json")), "/statements/0/products/0", "fails the schema: got string, want object"},
		{"vexctl sample", string(fixture(t, "openvex/vexctl-sample-2vulns.json")), "/statements/0", "'statement' not allowed"},
		{"vexctl v020-1", string(fixture(t, "openvex/vexctl-v020-1.json")), "/", "missing properties 'timestamp', 'version'"},
		{"bad state", strings.Replace(cdx, `"state": "not_affected"`, `"state": "harmless"`, 1), "/vulnerabilities/0/analysis/state", "fails the schema"},
		{"bad justification", strings.Replace(cdx, `"justification": "code_not_reachable"`, `"justification": 7`, 1), "/vulnerabilities/0/analysis/justification", "fails the schema"},
		{"affected without an action", strings.Replace(string(fixture(t, "openvex/go-vex-v0.2.0.json")), `"status": "fixed"`, `"status": "affected"`, 1), "/statements/0", "missing property 'action_statement'"},
		{"unknown status", strings.Replace(string(fixture(t, "openvex/go-vex-v0.2.0.json")), `"status": "fixed"`, `"status": "gone"`, 1), "/statements/0/status", "fails the schema"},
	} {
		_, err := vex.Parse([]byte(tc.doc), "")
		var ve *vex.Error
		if !errors.As(err, &ve) || ve.TooLarge || ve.Field != tc.field || !strings.Contains(ve.Problem, tc.problem) {
			t.Errorf("%s: %v, want %s: …%s…", tc.name, err, tc.field, tc.problem)
		}
	}
}

// Bad input other than the schema's: each an *Error naming the field.
func TestRefusals(t *testing.T) {
	t.Parallel()
	ovx := string(fixture(t, "openvex/go-vex-v0.2.0.json"))
	cdx := string(fixture(t, "cyclonedx/vex.json"))
	withComponents := strings.Replace(cdx, `"version": 1,`, `"version": 1, "components": [{"type": "library", "name": "x", "bom-ref": "x", "purl": "pkg:maven/%zz"}],`, 1)
	withComponents = strings.Replace(withComponents, `"ref": "urn:cdx:3e671687-395b-41f5-a30f-a58921a69b79/1#pkg:maven/com.fasterxml.jackson.core/jackson-databind@2.10.0?type=jar"`, `"ref": "x"`, 1)
	for _, tc := range []struct {
		name, doc, format, field, problem string
		tooLarge                          bool
	}{
		{"truncated", cdx[:len(cdx)/2], "", "", "not a JSON object", false},
		{"an array", `[]`, "", "", "not a JSON object", false},
		{"neither format", `{"statements":[]}`, "", "format", "neither CycloneDX", false},
		{"both formats", `{"bomFormat":"CycloneDX","@context":"https://openvex.dev/ns/v0.2.0"}`, "", "format", "neither CycloneDX", false},
		{"unknown format", ovx, "csaf", "format", "must be one of cyclonedx, openvex", false},
		{"OpenVEX read as CycloneDX", ovx, vex.FormatCycloneDX, "/specVersion", "must be one of 1.4, 1.5, 1.6", false},
		{"CycloneDX 1.3", strings.Replace(cdx, `"specVersion": "1.4"`, `"specVersion": "1.3"`, 1), "", "/specVersion", "must be one of", false},
		{"malformed product purl", strings.Replace(ovx, `"pkg:apk/alpine/libssl3@3.0.8-r3"`, `"pkg:apk/alpine/lib%zzssl3@3.0.8-r3"`, 1), "",
			"/statements/0/products/0/subcomponents/0/@id", "malformed package URL", false},
		{"purl without a name", strings.Replace(ovx, `"pkg:apk/alpine/libssl3@3.0.8-r3"`, `"pkg:apk/"`, 1), "",
			"/statements/0/products/0/subcomponents/0/@id", "malformed package URL", false},
		{"malformed component purl", withComponents, "", "/components/0/purl", "malformed package URL", false},
		{"malformed BOM-Link purl", strings.Replace(cdx, "#pkg:maven/com.fasterxml", "#pkg:maven/%zzcom.fasterxml", 1), "",
			"/vulnerabilities/0/affects/0/ref", "malformed package URL", false},
		{"too many statements", manyStatements(vex.MaxStatements + 1), "", "/statements", "at most 10000 entries", true},
		{"too large", `{"@context":"` + strings.Repeat("a", vex.MaxDocumentBytes) + `"}`, "", "", "exceeds", true},
	} {
		_, err := vex.Parse([]byte(tc.doc), tc.format)
		var ve *vex.Error
		if !errors.As(err, &ve) || ve.TooLarge != tc.tooLarge || ve.Field != tc.field || !strings.Contains(ve.Problem, tc.problem) {
			t.Errorf("%s: %#v (%v), want %q: …%s…", tc.name, ve, err, tc.field, tc.problem)
		}
	}
	// At the limit it is read.
	if doc, err := vex.Parse([]byte(manyStatements(vex.MaxStatements)), ""); err != nil || len(doc.Statements) != vex.MaxStatements {
		t.Fatalf("%d statements: %v", vex.MaxStatements, err)
	}
}

// manyStatements is an OpenVEX document of n statements, each about its
// own advisory in one npm package.
func manyStatements(n int) string {
	var b bytes.Buffer
	b.WriteString(`{"@context":"https://openvex.dev/ns/v0.2.0","@id":"https://example.com/vex/many","author":"t","timestamp":"2026-01-01T00:00:00Z","version":1,"statements":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"vulnerability":{"name":"CVE-2026-%05d"},"products":[{"@id":"pkg:npm/left-pad@1.%d.0"}],"status":"not_affected","justification":"component_not_present"}`, i, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// The largest accepted document is read and checked in bounded time.
func TestLargestDocumentInBoundedTime(t *testing.T) {
	t.Parallel()
	doc := manyStatements(vex.MaxStatements)
	start := time.Now()
	if _, err := vex.Parse([]byte(doc), ""); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("%d statements (%d bytes) took %v", vex.MaxStatements, len(doc), d)
	} else {
		t.Logf("%d statements (%d bytes): %v", vex.MaxStatements, len(doc), d)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"openvex/go-vex-v0.2.0.json", "openvex/go-vex-v0.0.1.json", "cyclonedx/vex.json", "cyclonedx/use-case-5.json"} {
		f.Add(fixture(f, name), "")
	}
	f.Add([]byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","version":1,"vulnerabilities":[{"id":"x","affects":[{"ref":"urn:cdx:a/1#%zz"}]}]}`), vex.FormatCycloneDX)
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		doc, err := vex.Parse(data, format)
		var ve *vex.Error
		if err != nil && !errors.As(err, &ve) {
			t.Fatalf("not a document error: %v", err)
		}
		if err == nil && (doc.ID == "" || len(doc.ID) > vex.MaxIDBytes) {
			t.Fatalf("document id %q", doc.ID)
		}
	})
}
