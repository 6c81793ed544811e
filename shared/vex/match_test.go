package vex_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/vex"
)

// alpine is an SCA finding of an Alpine package as OSV-Scanner reports it.
func alpine(id, name, version, status string, advisories ...string) vex.Finding {
	return vex.Finding{ID: id, ProjectID: 1, Branch: "main", Tool: "osv-scanner", Advisories: advisories,
		Ecosystem: "Alpine:v3.17", Name: name, Version: version, Status: status}
}

// go-vex's real document against findings: the not_affected statements
// dismiss exactly the findings of their advisory in their packages and
// version; fixed ones are left to the scans; another version, package,
// ecosystem or advisory is not matched.
func TestMatchRealOpenVEX(t *testing.T) {
	t.Parallel()
	idx := vex.NewIndex(mustParse(t, fixture(t, "openvex/go-vex-v0.2.0.json"), ""))
	fs := []vex.Finding{
		alpine("ssl-3446", "libssl3", "3.0.8-r3", "open", "CVE-2023-3446"),
		alpine("crypto-3817", "libcrypto3", "3.0.8-r3", "fix_in_progress", "ALPINE-X", "cve-2023-3817"),
		alpine("ssl-1255", "libssl3", "3.0.8-r3", "open", "CVE-2023-1255"),
		alpine("ssl-newer", "libssl3", "3.0.8-r4", "open", "CVE-2023-3446"),
		alpine("other-pkg", "openssl", "3.0.8-r3", "open", "CVE-2023-3446"),
		alpine("other-cve", "libssl3", "3.0.8-r3", "open", "CVE-2023-0001"),
		{ID: "debian", Advisories: []string{"CVE-2023-3446"}, Ecosystem: "Debian:12", Name: "libssl3", Version: "3.0.8-r3", Status: "open"},
	}
	got := map[string]vex.Outcome{}
	for _, o := range mustPlan(t, idx, fs) {
		got[o.Finding.ID] = o
	}
	if len(got) != 3 {
		t.Fatalf("matched %v, want ssl-3446, crypto-3817, ssl-1255", got)
	}
	reason := "VEX not_affected: vulnerable_code_not_present: affected functions were removed before packaging " +
		"(from VEX https://openvex.dev/docs/public/vex-d4e9020b6d0d26f131d535e055902dd6ccf3e2088bce3079a8cd3588a4b14c78)"
	for _, id := range []string{"ssl-3446", "crypto-3817"} {
		if o := got[id]; o.Result != vex.Changed || o.To != "false_positive" || o.Reason != reason {
			t.Errorf("%s: %+v", id, o)
		}
	}
	if o := got["ssl-1255"]; o.Result != vex.Skipped || o.To != "open" || o.Why != "fixed: left to the scans" || o.Statement != 0 {
		t.Errorf("fixed: %+v", o)
	}
	// Applied, the same document changes nothing more.
	again := fs[0]
	again.Status, again.Reason = "false_positive", reason
	if o, ok := idx.Decide(again); !ok || o.Result != vex.Unchanged {
		t.Errorf("applied twice: %+v", o)
	}
}

// The real CycloneDX document's BOM-Link names a Maven package by purl:
// the finding of that package and version, by CVE or by the reference's
// alias, is matched; another version is not.
func TestMatchRealCycloneDX(t *testing.T) {
	t.Parallel()
	idx := vex.NewIndex(mustParse(t, fixture(t, "cyclonedx/vex.json"), ""))
	maven := func(id, version string, ids ...string) vex.Finding {
		return vex.Finding{ID: id, Advisories: ids, Ecosystem: "Maven", Name: "com.fasterxml.jackson.core:jackson-databind", Version: version, Status: "open"}
	}
	plan := mustPlan(t, idx, []vex.Finding{maven("by-cve", "2.10.0", "GHSA-288c-cq4h-88gq", "CVE-2020-25649"),
		maven("by-alias", "2.10.0", "snyk-java-comfasterxmljacksoncore-1048302"), maven("other-version", "2.10.1", "CVE-2020-25649")})
	if len(plan) != 2 || plan[0].Finding.ID != "by-cve" || plan[1].Finding.ID != "by-alias" || plan[0].Result != vex.Changed ||
		!strings.HasPrefix(plan[0].Reason, "VEX not_affected: code_not_reachable: Automated dataflow analysis") {
		t.Fatalf("plan %+v", plan)
	}
}

func TestPackageMatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		purl, eco, name, version string
		want                     bool
	}{
		{"pkg:npm/lodash", "npm", "lodash", "4.17.20", true}, // no version: every version
		{"pkg:npm/lodash@4.17.20", "npm", "lodash", "4.17.20", true},
		{"pkg:npm/lodash@4.17.20", "npm", "lodash", "4.17.21", false},
		{"pkg:npm/%40babel/traverse@7.23.1", "npm", "@babel/traverse", "7.23.1", true},
		{"pkg:pypi/PyYAML@5.3", "PyPI", "pyyaml", "5.3", true},
		{"pkg:pypi/zope.interface@5.0", "PyPI", "zope-interface", "5.0", true},
		{"pkg:golang/golang.org/x/net@v0.7.0", "Go", "golang.org/x/net", "0.7.0", true},
		{"pkg:golang/golang.org/x/net@v0.7.0", "Go", "golang.org/x/net", "v0.7.0", true},
		{"pkg:golang/golang.org/x/net@v0.7.0", "npm", "golang.org/x/net", "v0.7.0", false},
		{"pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1?type=jar", "Maven", "org.apache.logging.log4j:log4j-core", "2.14.1", true},
		{"pkg:maven/org.apache.logging.log4j/log4j-api@2.14.1", "Maven", "org.apache.logging.log4j:log4j-core", "2.14.1", false},
		{"pkg:deb/debian/openssl@3.0.11-1", "Debian:12", "openssl", "3.0.11-1", true},
		{"pkg:cargo/time@0.1.45", "crates.io", "time", "0.1.45", true},
	} {
		p, err := vex.ParsePURL("purl", tc.purl)
		if err != nil {
			t.Fatalf("%s: %v", tc.purl, err)
		}
		if got := p.Matches(tc.eco, tc.name, tc.version); got != tc.want {
			t.Errorf("%s vs %s %s %s: %v, want %v (%+v)", tc.purl, tc.eco, tc.name, tc.version, got, tc.want, p)
		}
	}
}

// openVEX is a document of the given statements (JSON objects).
func openVEX(statements ...string) []byte {
	return []byte(`{"@context":"https://openvex.dev/ns/v0.2.0","@id":"https://example.com/vex/1","author":"t",` +
		`"timestamp":"2026-01-01T00:00:00Z","version":1,"statements":[` + strings.Join(statements, ",") + `]}`)
}

// Each status's effect on each finding status.
func TestEffects(t *testing.T) {
	t.Parallel()
	stmt := func(status, extra string) string {
		return `{"vulnerability":{"name":"CVE-2021-23337","aliases":["GHSA-35jh-r3h4-6jhm"]},"products":[{"@id":"pkg:npm/lodash@4.17.20"}],"status":"` + status + `"` + extra + `}`
	}
	const notAffected = "VEX not_affected: vulnerable_code_not_in_execute_path: template is never called (from VEX https://example.com/vex/1)"
	const affected = "VEX affected: upgrade to 4.17.21 (from VEX https://example.com/vex/1)"
	docs := map[string]string{
		vex.NotAffected:        stmt("not_affected", `,"justification":"vulnerable_code_not_in_execute_path","impact_statement":"template is never called"`),
		vex.Affected:           stmt("affected", `,"action_statement":"upgrade to 4.17.21"`),
		vex.UnderInvestigation: stmt("under_investigation", ""),
		vex.Fixed:              stmt("fixed", ""),
	}
	for _, tc := range []struct {
		status, from, reason, result, to, why string
	}{
		{vex.NotAffected, "open", "", vex.Changed, "false_positive", ""},
		{vex.NotAffected, "fix_in_progress", "", vex.Changed, "false_positive", ""},
		{vex.NotAffected, "false_positive", notAffected, vex.Unchanged, "false_positive", "already false_positive from this statement"},
		{vex.NotAffected, "false_positive", "a person's reason", vex.Skipped, "false_positive", "already false_positive; its reason is kept"},
		{vex.NotAffected, "accepted_risk", "", vex.Skipped, "accepted_risk", "accepted_risk is a person's decision; kept"},
		{vex.NotAffected, "fixed", "", vex.Skipped, "fixed", "status fixed is kept"},
		{vex.Affected, "false_positive", "dismissed", vex.Changed, "open", ""},
		{vex.Affected, "open", "", vex.Unchanged, "open", "already open"},
		{vex.Affected, "fix_in_progress", "", vex.Unchanged, "fix_in_progress", "already fix_in_progress"},
		{vex.Affected, "accepted_risk", "", vex.Skipped, "accepted_risk", "accepted_risk acknowledges an affected finding; kept"},
		{vex.UnderInvestigation, "false_positive", "", vex.Changed, "open", ""},
		{vex.Fixed, "open", "", vex.Skipped, "open", "fixed: left to the scans"},
	} {
		idx := vex.NewIndex(mustParse(t, openVEX(docs[tc.status]), ""))
		f := vex.Finding{ID: "f", Advisories: []string{"GHSA-35jh-r3h4-6jhm"}, Ecosystem: "npm", Name: "lodash", Version: "4.17.20", Status: tc.from, Reason: tc.reason}
		o, ok := idx.Decide(f)
		if !ok || o.Result != tc.result || o.To != tc.to || o.Why != tc.why {
			t.Errorf("%s on %s: %+v", tc.status, tc.from, o)
		}
		switch {
		case o.Result == vex.Changed && tc.to == "false_positive" && o.Reason != notAffected,
			o.Result == vex.Changed && tc.status == vex.Affected && o.Reason != affected:
			t.Errorf("%s on %s: reason %q", tc.status, tc.from, o.Reason)
		}
	}
}

// Of several statements about one finding the latest decides (then the
// later in the document); the others list it as superseded.
func TestLatestStatementDecides(t *testing.T) {
	t.Parallel()
	s := func(status, at, extra string) string {
		return `{"vulnerability":{"name":"CVE-2021-23337"},"products":[{"@id":"pkg:npm/lodash"}],"status":"` + status + `","timestamp":"` + at + `"` + extra + `}`
	}
	idx := vex.NewIndex(mustParse(t, openVEX(
		s("not_affected", "2026-03-01T00:00:00Z", `,"justification":"component_not_present"`),
		s("affected", "2026-01-01T00:00:00Z", `,"action_statement":"upgrade"`),
		s("under_investigation", "2026-03-01T00:00:00Z", ""),
	), ""))
	f := vex.Finding{ID: "f", Advisories: []string{"CVE-2021-23337"}, Ecosystem: "npm", Name: "lodash", Version: "1.0.0", Status: "false_positive"}
	plan := mustPlan(t, idx, []vex.Finding{f})
	if len(plan) != 3 || plan[0].Statement != 2 || plan[0].Result != vex.Changed || plan[0].To != "open" || plan[0].Superseded {
		t.Fatalf("plan %+v", plan)
	}
	for _, o := range plan[1:] {
		if o.Result != vex.Skipped || !o.Superseded || o.Why != "superseded by /statements/2" {
			t.Errorf("%+v", o)
		}
	}
}

// A reason is held to MaxReasonBytes and always names its document.
func TestReasonBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 3000)
	idx := vex.NewIndex(mustParse(t, openVEX(`{"vulnerability":{"name":"CVE-1"},"products":[{"@id":"pkg:npm/a"}],"status":"not_affected","impact_statement":"`+long+"\u202e"+`"}`), ""))
	o, _ := idx.Decide(vex.Finding{Advisories: []string{"cve-1"}, Ecosystem: "npm", Name: "a", Status: "open"})
	if len(o.Reason) > vex.MaxReasonBytes || !strings.HasSuffix(o.Reason, "(from VEX https://example.com/vex/1)") || strings.ContainsRune(o.Reason, '\u202e') {
		t.Fatalf("reason of %d bytes: …%s", len(o.Reason), o.Reason[len(o.Reason)-60:])
	}
}

func TestCanonicalID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		" cve-2021-44228 ": "CVE-2021-44228", "https://nvd.nist.gov/vuln/detail/CVE-2021-44228": "CVE-2021-44228",
		"https://github.com/advisories/GHSA-jfh8-c2jp-5v3q/": "GHSA-JFH8-C2JP-5V3Q", "https://pkg.go.dev/vuln/GO-2022-0969?tab=x": "GO-2022-0969",
		"GO-2022-0969": "GO-2022-0969", "": "",
	} {
		if got := vex.CanonicalID(in); got != want {
			t.Errorf("CanonicalID(%q) = %q, want %q", in, got, want)
		}
	}
}

func mustPlan(t *testing.T, idx *vex.Index, fs []vex.Finding) []vex.Outcome {
	t.Helper()
	plan, err := idx.Plan(fs)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// Statements that repeat each other over many findings are refused past
// MaxOutcomes (413): the plan lists at most that many outcomes, never
// statements squared per finding.
func TestRepeatedStatementsAreBounded(t *testing.T) {
	var sts []string
	for n := range 2000 {
		sts = append(sts, fmt.Sprintf(`{"vulnerability":{"name":"CVE-2021-23337"},"products":[{"@id":"pkg:npm/lodash@1.0.0"}],"status":"not_affected","justification":"component_not_present","timestamp":"2026-01-01T00:%02d:%02dZ"}`, n/60%60, n%60))
	}
	idx := vex.NewIndex(mustParse(t, openVEX(sts...), ""))
	fs := make([]vex.Finding, 200)
	for n := range fs {
		fs[n] = vex.Finding{ID: fmt.Sprint(n), Advisories: []string{"CVE-2021-23337", "GHSA-35jh-r3h4-6jhm"}, Ecosystem: "npm", Name: "lodash", Version: "1.0.0", Status: "open"}
	}
	plan, err := idx.Plan(fs[:50]) // 100,000 outcomes: within the bound
	if err != nil || len(plan) != 50*2000 {
		t.Fatalf("within the bound: %d outcomes, %v", len(plan), err)
	}
	_, err = idx.Plan(fs[50:]) // the import's total passes it
	var ve *vex.Error
	if !errors.As(err, &ve) || !ve.TooLarge {
		t.Fatalf("past the bound: %v", err)
	}
}
