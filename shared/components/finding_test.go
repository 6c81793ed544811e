package components_test

import (
	"testing"

	"github.com/acme/codescan-api/shared/components"
)

// A finding's advisory: below the fix with one, the reported version only
// without (or with a fix that does not read or is not above it).
func TestFromFinding(t *testing.T) {
	for _, c := range []struct {
		name                   string
		eco, pkg, version, fix string
		wantPackage            string
		affected, notAffected  []string
	}{
		{"below the fix", "npm", "foo", "1.0.0", "1.2.0", "pkg:npm/foo", []string{"0.1.0", "1.0.0", "1.1.9"}, []string{"1.2.0", "2.0.0"}},
		{"no fix", "npm", "@scope/foo", "1.0.0", "", "pkg:npm/%40scope/foo", []string{"1.0.0"}, []string{"0.9.0", "1.0.1"}},
		{"unreadable fix", "npm", "foo", "1.0.0", "soon", "pkg:npm/foo", []string{"1.0.0"}, []string{"0.9.0"}},
		{"fix not above", "npm", "foo", "1.3.0", "1.2.0", "pkg:npm/foo", []string{"1.3.0"}, []string{"1.1.0"}},
		{"Maven order", "Maven", "org.apache.logging.log4j:log4j-core", "2.14.1", "2.17.1", "pkg:maven/org.apache.logging.log4j/log4j-core",
			[]string{"2.9.1", "2.17.0"}, []string{"2.17.1", "2.20.0"}},
		{"Go module", "Go", "github.com/tidwall/gjson", "v1.6.0", "1.6.4", "pkg:golang/github.com/tidwall/gjson", []string{"v1.6.0", "v1.6.3"}, []string{"v1.6.4"}},
	} {
		a, err := components.FromFinding("CVE-2099-0001", []string{"GHSA-x"}, c.eco, c.pkg, c.version, c.fix)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if a.Package != c.wantPackage || a.ID != "CVE-2099-0001" || len(a.Aliases) != 1 {
			t.Errorf("%s: %+v", c.name, a)
		}
		for _, v := range c.affected {
			if !a.Affects(mustV(t, a.Ecosystem, v)) {
				t.Errorf("%s: %s not affected", c.name, v)
			}
		}
		for _, v := range c.notAffected {
			if a.Affects(mustV(t, a.Ecosystem, v)) {
				t.Errorf("%s: %s affected", c.name, v)
			}
		}
	}
	if _, err := components.FromFinding("CVE-2099-0001", nil, "NoSuchEcosystem", "foo", "1.0.0", ""); err == nil {
		t.Error("an unknown ecosystem made an advisory")
	}
}
