package components_test

import (
	"errors"
	"testing"

	"github.com/acme/codescan-api/shared/components"
)

func mustV(t *testing.T, eco, v string) components.Version {
	t.Helper()
	out, err := components.ParseVersion(eco, v)
	if err != nil {
		t.Fatalf("%s %s: %v", eco, v, err)
	}
	return out
}

// Each ecosystem's own order, where text or naive numeric order differs.
func TestVersionsCompareByEcosystem(t *testing.T) {
	for _, tc := range []struct{ eco, lo, hi string }{
		{"Maven", "2.17.0", "2.17.1"},
		{"Maven", "2.0-beta9", "2.0"},        // a qualifier sorts before the release
		{"Maven", "2.0-rc1", "2.0-SNAPSHOT"}, // rc < snapshot < release
		{"Maven", "2.9.1", "2.17.1"},         // numerically, not as text
		{"npm", "4.17.9", "4.17.20"},         // semver
		{"npm", "1.0.0-alpha", "1.0.0"},      // a pre-release comes first
		{"PyPI", "1.0rc1", "1.0"},            // PEP 440
		{"PyPI", "1.0", "1.0.post1"},         // post-releases after
		{"Go", "v0.3.5", "v0.3.8"},           // the v of Go modules
		{"Go", "v1.2.3-pre", "v1.2.3"},       // pre-release
		{"RubyGems", "1.0.a", "1.0"},         // a letter is a pre-release
		{"Debian", "1:1.0", "2:0.9"},         // the epoch first
		{"NuGet", "1.0.0-beta", "1.0.0"},     // pre-release
	} {
		lo, hi := mustV(t, tc.eco, tc.lo), mustV(t, tc.eco, tc.hi)
		if lo.Compare(hi) >= 0 || hi.Compare(lo) <= 0 {
			t.Errorf("%s: %s should sort before %s", tc.eco, tc.lo, tc.hi)
		}
	}
	if mustV(t, "Maven", "1.0").Compare(mustV(t, "Maven", "1.0.0")) != 0 {
		t.Error("Maven: 1.0 and 1.0.0 are the same version")
	}
}

func TestParseVersionRefuses(t *testing.T) {
	if _, err := components.ParseVersion("Nope", "1.0"); !errors.Is(err, components.ErrUnknownEcosystem) {
		t.Errorf("unknown ecosystem: %v", err)
	}
	if _, err := components.ParseVersion("", "1.0"); !errors.Is(err, components.ErrUnknownEcosystem) {
		t.Errorf("no ecosystem: %v", err)
	}
	for _, v := range []string{"", "1 0", "1#0", "1\x00", string(make([]byte, 200))} {
		if _, err := components.ParseVersion("npm", v); !errors.Is(err, components.ErrInvalidVersion) {
			t.Errorf("%q: %v", v, err)
		}
	}
	for _, tc := range [][2]string{{"npm", "4.17"}, {"npm", "latest"}, {"Go", "v1.2"}, {"crates.io", "1.0.0.0"}} {
		if _, err := components.ParseVersion(tc[0], tc[1]); !errors.Is(err, components.ErrInvalidVersion) {
			t.Errorf("%s %q: %v", tc[0], tc[1], err)
		}
	}
}

func TestRange(t *testing.T) {
	r := components.Range{{Op: components.GTE, Version: mustV(t, "Maven", "2.0-beta9")}, {Op: components.LT, Version: mustV(t, "Maven", "2.17.1")}}
	for v, want := range map[string]bool{"1.2.17": false, "2.0-beta9": true, "2.0": true, "2.14.1": true, "2.17.0": true, "2.17.1": false, "2.20.0": false} {
		if got := r.Holds(mustV(t, "Maven", v)); got != want {
			t.Errorf("%s: %v, want %v", v, got, want)
		}
	}
	if !(components.Range{}).Holds(mustV(t, "npm", "1.0.0")) {
		t.Error("the empty range holds every version")
	}
}

// OSV's evaluation: Log4Shell's record (GHSA-jfh8-c2jp-5v3q) has two
// ranges, introduced 2.13.0 fixed 2.15.0 and introduced 2.0-beta9 fixed
// 2.3.1 style ranges; last_affected closes after the version.
func TestAdvisoryAffects(t *testing.T) {
	a := components.Advisory{ID: "GHSA-jfh8-c2jp-5v3q", Package: "pkg:maven/org.apache.logging.log4j/log4j-core", Ecosystem: "Maven",
		Ranges: [][]components.Event{
			{{Introduced: "2.13.0"}, {Fixed: "2.15.0"}},
			{{Introduced: "2.0-beta9"}, {Fixed: "2.3.1"}},
			{{Introduced: "0"}, {LastAffected: "1.0.1"}},
		},
		Versions: []string{"3.0.0-odd"}}
	for v, want := range map[string]bool{"1.0.1": true, "1.0.2": false, "2.0-beta8": false, "2.0": true, "2.3.0": true, "2.3.1": false,
		"2.12.4": false, "2.13.0": true, "2.14.1": true, "2.15.0": false, "3.0.0-odd": true} {
		if got := a.Affects(mustV(t, "Maven", v)); got != want {
			t.Errorf("%s: %v, want %v", v, got, want)
		}
	}
}
