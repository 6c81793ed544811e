package cyclonedx

import (
	"errors"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/internal/wellformed"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

type brief struct {
	Tool, RuleID, Name, Version, Ecosystem, Fix, CVE, Severity string
	CVSS                                                       float64
	Urgency                                                    string
	CWE                                                        int
}

func TestFixtures(t *testing.T) {
	cases := map[string][]brief{
		// Trivy: Maven purls, several ratings (the highest CVSS score, the
		// highest severity word), the fix from the recommendation, CWEs.
		"trivy-pom.cdx.json": {
			{"trivy", "CVE-2020-9548", "com.fasterxml.jackson.core:jackson-databind", "2.9.1", "Maven", "2.9.10.4", "CVE-2020-9548", "CRITICAL", 9.8, reportfinding.Critical, 502},
			{"trivy", "CVE-2021-20190", "com.fasterxml.jackson.core:jackson-databind", "2.9.1", "Maven", "2.9.10.7", "CVE-2021-20190", "HIGH", 8.3, reportfinding.High, 502},
		},
		// Grype: a component without purl (resolved by bom-ref, named by
		// its own name), EPSS and KEV ratings ignored for the score.
		"grype-dir.cdx.json": {
			{"grype", "CVE-1999-0001", "package-1", "1.1.1", "", "", "CVE-1999-0001", "LOW", 8.2, reportfinding.High, 0},
			{"grype", "CVE-1999-0002", "package-2", "2.2.2", "Debian", "", "CVE-1999-0002", "CRITICAL", 8.5, reportfinding.High, 0},
		},
	}
	for name, want := range cases {
		rep := wellformed.Fixture(t, Parse, name)
		if len(rep.Findings) != len(want) {
			t.Fatalf("%s: %d findings: %+v", name, len(rep.Findings), rep.Findings)
		}
		for i, f := range rep.Findings {
			d := f.SCA
			got := brief{f.Tool, f.RuleID, d.Name, d.Version, d.Ecosystem, d.FixVersion, d.CVE, d.Severity, d.CVSS, f.Urgency, f.CWE}
			if got != want[i] || f.Kind != reportfinding.SCA || d.Reachability.Status != reportfinding.NotAnalyzed || f.Title == "" {
				t.Errorf("%s[%d] = %+v, want %+v", name, i, got, want[i])
			}
		}
	}
	// Advisory URLs name the GHSA id.
	if ids := wellformed.Fixture(t, Parse, "trivy-pom.cdx.json").Findings[0].SCA.IDs; strings.Join(ids, ",") != "CVE-2020-9548,GHSA-p43x-xfjf-5jhr" {
		t.Fatalf("ids %v", ids)
	}
}

func TestInterpretation(t *testing.T) {
	doc := `{"bomFormat":"CycloneDX","specVersion":"1.7","metadata":{"tools":[{"vendor":"OWASP","name":"Dependency-Track"}],
	 "component":{"bom-ref":"app","name":"app","components":[{"bom-ref":"nested","name":"left-pad","version":"1.0.0","purl":"pkg:npm/%40scope/left-pad@1.0.0"}]}},
	 "vulnerabilities":[
	  {"id":"GHSA-aaaa-bbbb-cccc","references":[{"id":"CVE-2024-0001"}],"ratings":[{"method":"CVSSv31","vector":"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N"}],
	   "affects":[{"ref":"nested","versions":[{"version":"1.0.0","status":"affected"},{"version":"1.2.0","status":"unaffected"},{"version":"1.1.0","status":"unaffected"},{"version":"0.9.0","status":"unaffected"}]},{"ref":"missing"}]},
	  {"id":"","affects":[{"ref":"app"}]},
	  {"id":"X-1"}]}`
	rep, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := wellformed.Check(rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("%+v", rep.Findings)
	}
	f := rep.Findings[0]
	d := f.SCA
	// A nested component by bom-ref; the score computed from the vector;
	// the lowest unaffected version above the installed one; the legacy
	// tool list names the tool.
	if f.Tool != "dependency-track" || d.Name != "@scope/left-pad" || d.Ecosystem != "npm" || d.CVSS != 7.5 || d.Severity != "HIGH" ||
		d.FixVersion != "1.1.0" || d.CVE != "CVE-2024-0001" || f.RuleID != "GHSA-aaaa-bbbb-cccc" {
		t.Fatalf("%+v %+v", f, d)
	}
	// A plain SBOM has no findings.
	if rep, err := Parse([]byte(`{"bomFormat":"CycloneDX","specVersion":"1.5","components":[]}`)); err != nil || len(rep.Findings) != 0 {
		t.Fatalf("sbom: %+v %v", rep, err)
	}
}

func TestInvalid(t *testing.T) {
	for in, want := range map[string]string{
		"":  "the body is empty",
		"{": "not valid JSON",
		`{"bomFormat":"SPDX","specVersion":"1.6"}`:                           `"bomFormat" must be "CycloneDX"`,
		`{"bomFormat":"CycloneDX"}`:                                          `missing "specVersion"`,
		`{"bomFormat":"CycloneDX","specVersion":"1.3"}`:                      "specVersion 1.3 has no vulnerabilities",
		`{"bomFormat":"CycloneDX","specVersion":"9.9"}`:                      "invalid specification version",
		`{"bomFormat":"CycloneDX","specVersion":"1.6","vulnerabilities":{}}`: `"vulnerabilities" has the wrong type`,
	} {
		_, err := Parse([]byte(in))
		var inv *reporterr.Invalid
		if !errors.As(err, &inv) || !strings.Contains(inv.Problem, want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
}
