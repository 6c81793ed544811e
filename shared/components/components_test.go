package components_test

import (
	"errors"
	"testing"

	"github.com/acme/codescan-api/shared/components"
)

func TestParsePURLIsCanonical(t *testing.T) {
	for _, tc := range []struct{ in, pkg, full, eco string }{
		{"pkg:npm/lodash@4.17.20", "pkg:npm/lodash", "pkg:npm/lodash@4.17.20", "npm"},
		{"pkg:NPM/%40babel/core@7.0.0?arch=x#sub/path", "pkg:npm/%40babel/core", "pkg:npm/%40babel/core@7.0.0", "npm"},
		{"pkg:pypi/Django_Rest@3.0", "pkg:pypi/django-rest", "pkg:pypi/django-rest@3.0", "PyPI"},
		{"pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1", "pkg:maven/org.apache.logging.log4j/log4j-core", "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1", "Maven"},
		{"pkg:golang/github.com/tidwall/gjson@v1.6.0", "pkg:golang/github.com/tidwall/gjson", "pkg:golang/github.com/tidwall/gjson@v1.6.0", "Go"},
		{"pkg:generic/openssl@3.0.0", "pkg:generic/openssl", "pkg:generic/openssl@3.0.0", ""},
	} {
		p, err := components.ParsePURL(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if p.Package() != tc.pkg || p.String() != tc.full || p.Ecosystem() != tc.eco {
			t.Errorf("%s: package %q, purl %q, ecosystem %q; want %q, %q, %q", tc.in, p.Package(), p.String(), p.Ecosystem(), tc.pkg, tc.full, tc.eco)
		}
	}
}

func TestParsePURLRefuses(t *testing.T) {
	for _, in := range []string{"", "lodash", "pkg:npm", "pkg:npm/", "npm/lodash@1", "pkg:npm/lo%23dash@1", "pkg:npm/lodash@1%0A2",
		"pkg:npm/" + string(make([]byte, 600))} {
		if _, err := components.ParsePURL(in); !errors.Is(err, components.ErrInvalidPURL) {
			t.Errorf("%q: %v, want ErrInvalidPURL", in, err)
		}
	}
}

func TestFromEcosystem(t *testing.T) {
	for _, tc := range []struct{ eco, name, version, purl string }{
		{"Maven", "org.apache.logging.log4j:log4j-core", "2.14.1", "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1"},
		{"npm", "@babel/core", "7.0.0", "pkg:npm/%40babel/core@7.0.0"},
		{"Go", "github.com/gogo/protobuf", "1.3.1", "pkg:golang/github.com/gogo/protobuf@1.3.1"},
		{"Go", "stdlib", "v1.26.8", "pkg:golang/stdlib@v1.26.8"},
		{"crates.io", "smallvec", "1.6.0", "pkg:cargo/smallvec@1.6.0"},
		{"PyPI", "Jinja2", "2.4.1", "pkg:pypi/jinja2@2.4.1"},
		{"Debian:12", "openssl", "3.0.11-1", "pkg:deb/openssl@3.0.11-1"},
	} {
		c, err := components.FromEcosystem(tc.eco, tc.name, tc.version, "")
		if err != nil {
			t.Fatalf("%s %s: %v", tc.eco, tc.name, err)
		}
		if c.PURL != tc.purl || c.Relation != components.Unknown {
			t.Errorf("%s %s: %q (%s), want %q", tc.eco, tc.name, c.PURL, c.Relation, tc.purl)
		}
	}
	for _, bad := range [][3]string{{"Maven", "no-colon", "1"}, {"Nope", "x", "1"}, {"npm", "x", ""}} {
		if _, err := components.FromEcosystem(bad[0], bad[1], bad[2], ""); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestSetKeepsOnePerPURL(t *testing.T) {
	var s components.Set
	a, _ := components.New("pkg:npm/b@1", "", components.Transitive, []string{"MIT", "MIT", "NOASSERTION", "bad\x00"})
	b, _ := components.New("pkg:npm/b@1", "", components.Direct, nil)
	c, _ := components.New("pkg:npm/a@2", "", "", nil)
	for _, x := range []components.Component{a, b, c} {
		s.Add(x)
	}
	got := s.List()
	if len(got) != 2 || got[0].PURL != "pkg:npm/a@2" || got[0].Relation != components.Unknown || got[1].Relation != components.Direct ||
		len(got[1].Licenses) != 1 || got[1].Licenses[0] != "MIT" {
		t.Errorf("set: %+v", got)
	}
}
