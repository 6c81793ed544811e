package govulncheck

import (
	"errors"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/internal/wellformed"
	"github.com/acme/codescan-api/shared/reports/reporterr"
)

type brief struct {
	RuleID, Module, Version, Fix, CVE, Status, Urgency string
	Usages                                             int
}

func briefs(rep reportfinding.Report) []brief {
	var out []brief
	for _, f := range rep.Findings {
		d := f.SCA
		out = append(out, brief{f.RuleID, d.Name, d.Version, d.FixVersion, d.CVE, d.Reachability.Status, f.Urgency, len(d.Reachability.Usages)})
	}
	return out
}

func same(t *testing.T, name string, got, want []brief) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %+v", name, got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s[%d] = %+v, want %+v", name, i, got[i], want[i])
		}
	}
}

// The module that calls gjson.Get: three advisories reach it through
// query.Name, and x/text's language package is imported without a call
// into its vulnerable functions.
func TestCalls(t *testing.T) {
	rep := wellformed.Fixture(t, Parse, "calls.json")
	same(t, "calls.json", briefs(rep), []brief{
		{"GO-2021-0054", "github.com/tidwall/gjson", "v1.6.0", "v1.6.6", "CVE-2020-36067", reportfinding.Reachable, reportfinding.High, 1},
		{"GO-2021-0059", "github.com/tidwall/gjson", "v1.6.0", "v1.6.4", "CVE-2020-35380", reportfinding.Reachable, reportfinding.High, 1},
		{"GO-2021-0265", "github.com/tidwall/gjson", "v1.6.0", "v1.9.3", "CVE-2021-42248", reportfinding.Reachable, reportfinding.High, 1},
		{"GO-2021-0113", "golang.org/x/text", "v0.3.5", "v0.3.7", "CVE-2021-38561", reportfinding.PackageImported, reportfinding.Medium, 0},
	})
	f := rep.Findings[0]
	u := f.SCA.Reachability.Usages[0]
	want := reportfinding.Usage{
		File: "internal/query/query.go", Line: 8, Function: "example.com/calls/internal/query.Name", Reachable: true,
		Path: "example.com/calls/internal/query.Name -> github.com/tidwall/gjson.Get -> github.com/tidwall/gjson.execModifier -> " +
			"github.com/tidwall/gjson.modPretty -> github.com/tidwall/gjson.Result.ForEach",
	}
	if u != want {
		t.Fatalf("usage %+v, want %+v", u, want)
	}
	if f.Kind != reportfinding.SCA || f.Tool != Tool || f.Path != Manifest || f.SCA.Ecosystem != "Go" || f.SCA.Severity != "UNSPECIFIED" ||
		strings.Join(f.SCA.IDs, ",") != "GO-2021-0054,CVE-2020-36067,GHSA-p64j-r5f4-pwwx" || f.Title == "" || f.SCA.Details == "" {
		t.Fatalf("finding %+v %+v", f, f.SCA)
	}
}

// The module that only requires x/text: module level, not reachable.
func TestRequires(t *testing.T) {
	same(t, "requires.json", briefs(wellformed.Fixture(t, Parse, "requires.json")), []brief{
		{"GO-2021-0113", "golang.org/x/text", "v0.3.5", "v0.3.7", "CVE-2021-38561", reportfinding.ModuleRequired, reportfinding.Low, 0},
	})
}

// The SARIF form gives the same levels and call paths; it names no
// version or fix for package and module level findings.
func TestSARIF(t *testing.T) {
	rep := wellformed.Fixture(t, Parse, "calls.sarif")
	same(t, "calls.sarif", briefs(rep), []brief{
		{"GO-2021-0054", "github.com/tidwall/gjson", "v1.6.0", "", "CVE-2020-36067", reportfinding.Reachable, reportfinding.High, 1},
		{"GO-2021-0059", "github.com/tidwall/gjson", "v1.6.0", "", "CVE-2020-35380", reportfinding.Reachable, reportfinding.High, 1},
		{"GO-2021-0113", "golang.org/x/text/language", "", "", "CVE-2021-38561", reportfinding.PackageImported, reportfinding.Medium, 0},
		{"GO-2021-0265", "github.com/tidwall/gjson", "v1.6.0", "", "CVE-2021-42248", reportfinding.Reachable, reportfinding.High, 1},
	})
	u := rep.Findings[1].SCA.Reachability.Usages[0]
	if u.File != "internal/query/query.go" || u.Line != 8 || u.Function != "example.com/calls/internal/query.Name" || !u.Reachable {
		t.Fatalf("usage %+v", u)
	}
	same(t, "requires.sarif", briefs(wellformed.Fixture(t, Parse, "requires.sarif")), []brief{
		{"GO-2021-0113", "golang.org/x/text", "", "", "CVE-2021-38561", reportfinding.ModuleRequired, reportfinding.Low, 0},
	})
}

func TestInvalid(t *testing.T) {
	for in, want := range map[string]string{
		"":                            "the body is empty",
		`{"progress":{"message":""}}`: `must start with govulncheck's "config" message`,
		`{"config":{"protocol_version":"v1.0.0"}} {`: "unexpected EOF",
		`[1]`: "top level must be a JSON object",
		`{"config":{"protocol_version":"v1.0.0"}} {"finding":{"trace":{}}}`: `"finding.trace" has the wrong type`,
	} {
		_, err := Parse([]byte(in))
		var inv *reporterr.Invalid
		if !errors.As(err, &inv) || !strings.Contains(inv.Problem, want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
}
