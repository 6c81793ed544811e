package osv

import (
	"errors"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/internal/wellformed"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

type brief struct {
	RuleID, Name, Version, Ecosystem, Fix, CVE, Severity string
	CVSS                                                 float64
	Urgency, IDs                                         string
}

func TestFixtures(t *testing.T) {
	cases := map[string][]brief{
		"go-and-cargo.json": {
			// No CVSS vector nor severity word: UNSPECIFIED, medium.
			{"GO-2021-0053", "github.com/gogo/protobuf", "1.3.1", "Go", "1.3.2", "CVE-2021-3121", "UNSPECIFIED", 0, reportfinding.Medium,
				"GO-2021-0053,CVE-2021-3121,GHSA-c3h9-896r-86jm"},
			// Two aliased advisories in one group: one finding, the score
			// computed from the CVSS v3.1 vector.
			{"GHSA-m5pq-gvj9-9vr8", "regex", "1.5.1", "crates.io", "1.5.5", "CVE-2022-24713", "HIGH", 7.5, reportfinding.High,
				"GHSA-m5pq-gvj9-9vr8,RUSTSEC-2022-0013,CVE-2022-24713"},
		},
		"multiple-packages.json": {
			{"GHSA-qc84-gqf4-9926", "crossbeam-utils", "0.6.6", "crates.io", "0.8.7", "CVE-2022-23639", "HIGH", 8.1, reportfinding.High,
				"GHSA-qc84-gqf4-9926,RUSTSEC-2022-0041,CVE-2022-23639"},
			// MODERATE is medium.
			{"GHSA-wfg4-322g-9vqv", "memoffset", "0.5.6", "crates.io", "0.6.2", "", "MEDIUM", 0, reportfinding.Medium,
				"GHSA-wfg4-322g-9vqv,RUSTSEC-2023-0045"},
			// Two fixed ranges: the fix is the lowest above the version.
			{"GHSA-43w2-9j62-hq99", "smallvec", "1.6.0", "crates.io", "1.6.1", "CVE-2021-25900", "CRITICAL", 9.8, reportfinding.Critical,
				"GHSA-43w2-9j62-hq99,RUSTSEC-2021-0003,CVE-2021-25900"},
		},
	}
	for name, want := range cases {
		rep := wellformed.Fixture(t, Parse, name)
		if len(rep.Findings) != len(want) {
			t.Fatalf("%s: %d findings: %+v", name, len(rep.Findings), rep.Findings)
		}
		for i, f := range rep.Findings {
			d := f.SCA
			got := brief{f.RuleID, d.Name, d.Version, d.Ecosystem, d.FixVersion, d.CVE, d.Severity, d.CVSS, f.Urgency, strings.Join(d.IDs, ",")}
			if got != want[i] || f.Kind != reportfinding.SCA || f.Tool != Tool || d.Reachability.Status != reportfinding.NotAnalyzed ||
				d.Manifest != "" || f.Title == "" || d.Summary == "" || d.Details == "" {
				t.Errorf("%s[%d] = %+v (%+v), want %+v", name, i, got, d, want[i])
			}
		}
	}
}

func TestInterpretation(t *testing.T) {
	doc := `{"results":[{"packageSource":{"path":"services/web/package-lock.json"},"packages":[
	  {"package":{"name":"lodash","version":"4.17.20","ecosystem":"npm"},
	   "vulnerabilities":[{"id":"GHSA-35jh-r3h4-6jhm","aliases":["CVE-2021-23337"],"summary":"Command Injection in lodash",
	     "severity":[{"type":"CVSS_V3","score":"not a vector"}],
	     "affected":[{"package":{"name":"lodash","ecosystem":"npm"},"ranges":[{"events":[{"introduced":"0"},{"fixed":"4.17.21"}]}]}]}],
	   "groups":[{"ids":["GHSA-35jh-r3h4-6jhm"],"aliases":["CVE-2021-23337"],"max_severity":"7.2"}]},
	  {"package":{"name":"","version":"1"},"vulnerabilities":[{"id":"X"}]},
	  {"package":{"name":"clean","version":"1"}}]}]}`
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
	// The group's max_severity is the score when no vector parses; an
	// older output's packageSource names the manifest.
	if f.SCA.CVSS != 7.2 || f.SCA.Severity != "HIGH" || f.Urgency != reportfinding.High || f.SCA.FixVersion != "4.17.21" ||
		f.SCA.Manifest != "services/web/package-lock.json" || f.Path != f.SCA.Manifest || f.Title != "Command Injection in lodash" {
		t.Fatalf("%+v %+v", f, f.SCA)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1.10.0", "1.9.3", 1}, {"v1.6.4", "1.6.4", 0}, {"1.6", "1.6.1", -1}, {"0.0.0-20220906165146-f3363e06e74c", "0.0.0-20210101000000-aaaaaaaaaaaa", 1},
		{"1.0.0-rc1", "1.0.0-rc2", -1},
	} {
		if got := CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestInvalid(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "the body is empty",
		"{":                             "not valid JSON",
		"[]":                            "top level must be a JSON object",
		`{"version":"2.1.0"}`:           `missing "results"`,
		`{"results":[{"packages":{}}]}`: `"results.packages" has the wrong type`,
	} {
		_, err := Parse([]byte(in))
		var inv *reporterr.Invalid
		if !errors.As(err, &inv) || !strings.Contains(inv.Problem, want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
}
