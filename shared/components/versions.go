package components

import (
	"errors"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/osv-scalibr/semantic"
)

// ErrUnknownEcosystem is an ecosystem whose versions have no known order.
var ErrUnknownEcosystem = errors.New("unknown ecosystem")

// ErrInvalidVersion is a version its ecosystem cannot read.
var ErrInvalidVersion = errors.New("invalid version")

// Version is a version read by its ecosystem's rules: semver for npm,
// Go, crates.io; Maven's ComparableVersion; PEP 440 for PyPI; NuGet,
// RubyGems, Packagist, Debian, Alpine, RPM and the others OSV knows
// (github.com/google/osv-scalibr/semantic, the OSV scanners' comparers).
type Version struct {
	v   semantic.Version
	raw string
}

// ParseVersion reads v as a version of ecosystem (an OSV ecosystem name).
func ParseVersion(ecosystem, v string) (Version, error) {
	v = strings.TrimSpace(v)
	if ecosystem == "" {
		return Version{}, ErrUnknownEcosystem
	}
	if v == "" || len(v) > MaxVersionBytes || strings.ContainsFunc(v, badRune) {
		return Version{}, fmt.Errorf("%w: empty, longer than %d bytes, or with spaces, control characters or '#'", ErrInvalidVersion, MaxVersionBytes)
	}
	if strictSemver[ecosystem] {
		if _, err := semver.StrictNewVersion(goVersion(ecosystem, v)); err != nil {
			return Version{}, fmt.Errorf("%w: not a semantic version (%v)", ErrInvalidVersion, err)
		}
	}
	sv, err := semantic.Parse(goVersion(ecosystem, v), ecosystem)
	switch {
	case errors.Is(err, semantic.ErrUnsupportedEcosystem):
		return Version{}, fmt.Errorf("%w %q", ErrUnknownEcosystem, ecosystem)
	case err != nil:
		return Version{}, fmt.Errorf("%w: %v", ErrInvalidVersion, err)
	}
	return Version{v: sv, raw: v}, nil
}

// strictSemver are the ecosystems whose versions are semantic versions
// (SemVer 2.0, checked by github.com/Masterminds/semver; the OSV
// comparer orders them but reads anything).
var strictSemver = map[string]bool{"npm": true, "crates.io": true, "Go": true}

// goVersion drops the "v" Go module versions carry (v1.2.3; OSV's Go
// ranges are written without it).
func goVersion(ecosystem, v string) string {
	if ecosystem == "Go" {
		return strings.TrimPrefix(v, "v")
	}
	return v
}

// Compare is -1, 0 or +1 as v is before, equal to or after w (both of
// one ecosystem).
func (v Version) Compare(w Version) int {
	n, err := v.v.Compare(w.v)
	if err != nil { // versions of two ecosystems: order by text, never panic
		return strings.Compare(v.raw, w.raw)
	}
	return n
}

// String is the version as given.
func (v Version) String() string { return v.raw }

// Bound is one end of a version range: the comparison ("lt", "lte",
// "gt", "gte") and its version.
type Bound struct {
	Op      string
	Version Version
}

// The comparisons of a Bound.
const (
	LT  = "lt"
	LTE = "lte"
	GT  = "gt"
	GTE = "gte"
)

// Range is a conjunction of bounds; the empty Range holds every version.
type Range []Bound

// Holds reports whether v satisfies every bound.
func (r Range) Holds(v Version) bool {
	for _, b := range r {
		c := v.Compare(b.Version)
		ok := false
		switch b.Op {
		case LT:
			ok = c < 0
		case LTE:
			ok = c <= 0
		case GT:
			ok = c > 0
		case GTE:
			ok = c >= 0
		}
		if !ok {
			return false
		}
	}
	return true
}
