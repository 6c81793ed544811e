// Package components is the common form of a software component (a
// package at a version) that the SBOM and SCA readers of shared/reports
// extract from an upload, and what every party to the component inventory
// agrees on: the canonical package URL, the package without its version
// (the key the inventory is indexed by), the OSV ecosystem name, and how
// versions of an ecosystem compare (versions.go).
package components

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	packageurl "github.com/package-url/packageurl-go"
)

// Relation says how a component reaches the project, when the report says.
const (
	Direct     = "direct"
	Transitive = "transitive"
	Unknown    = "unknown"
)

// Limits of what is kept of a component: the package URL becomes part of a
// DynamoDB sort key (at most 1,024 bytes) beside the project and branch, a
// version part of a sort key too.
const (
	MaxPURLBytes    = 512
	MaxVersionBytes = 128
	MaxLicenses     = 8
	MaxLicenseBytes = 128
	// MaxComponents bounds the components kept of one upload (CycloneDX
	// SBOMs of container images list a few thousand).
	MaxComponents = 25_000
)

// Component is one package at one version, as an upload lists it.
type Component struct {
	// PURL is the canonical package URL with its version, without
	// qualifiers or subpath ("pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1").
	PURL string
	// Package is PURL without its version: the inventory's index key.
	Package   string
	Type      string // purl type
	Namespace string
	Name      string
	Version   string
	// Ecosystem is the OSV ecosystem name (versions compare by its rules);
	// "" for a purl type OSV has none for.
	Ecosystem string
	// Relation is Direct, Transitive or Unknown.
	Relation string
	// Licenses are SPDX ids or expressions, as the report gives them.
	Licenses []string
}

// ErrInvalidPURL is a package URL that cannot be read or names no package.
var ErrInvalidPURL = errors.New("invalid package URL")

// PURL is a parsed, canonical package URL.
type PURL struct {
	Type, Namespace, Name, Version string
}

// ParsePURL reads a package URL into its canonical parts (the purl
// library's normalisation: lower-case type, the type's own name and
// namespace rules). Qualifiers and subpath are dropped: they name an
// artefact of the package, not another package.
func ParsePURL(s string) (PURL, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > MaxPURLBytes || !utf8.ValidString(s) {
		return PURL{}, fmt.Errorf("%w: empty, longer than %d bytes or not UTF-8", ErrInvalidPURL, MaxPURLBytes)
	}
	p, err := packageurl.FromString(s)
	if err != nil {
		return PURL{}, fmt.Errorf("%w: %v", ErrInvalidPURL, err)
	}
	if err := p.Normalize(); err != nil {
		return PURL{}, fmt.Errorf("%w: %v", ErrInvalidPURL, err)
	}
	out := PURL{Type: p.Type, Namespace: p.Namespace, Name: p.Name, Version: p.Version}
	for _, part := range []string{out.Namespace, out.Name, out.Version} {
		if strings.ContainsFunc(part, badRune) {
			return PURL{}, fmt.Errorf("%w: control, space or '#' characters", ErrInvalidPURL)
		}
	}
	if len(out.Version) > MaxVersionBytes {
		return PURL{}, fmt.Errorf("%w: the version is longer than %d bytes", ErrInvalidPURL, MaxVersionBytes)
	}
	return out, nil
}

// badRune are the characters no part of a kept package URL holds: '#'
// separates the parts of the inventory's keys, the others are never part
// of a package name or version.
func badRune(r rune) bool {
	return r == '#' || unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError
}

// Package is the package URL without a version.
func (p PURL) Package() string {
	return packageurl.NewPackageURL(p.Type, p.Namespace, p.Name, "", nil, "").ToString()
}

// String is the package URL with its version (when it has one).
func (p PURL) String() string {
	return packageurl.NewPackageURL(p.Type, p.Namespace, p.Name, p.Version, nil, "").ToString()
}

// Ecosystem is the OSV ecosystem of the purl type ("" when OSV has none).
func (p PURL) Ecosystem() string { return ecosystemOf[p.Type] }

// ecosystemOf names a purl type as OSV names its ecosystem.
var ecosystemOf = map[string]string{
	"npm": "npm", "pypi": "PyPI", "maven": "Maven", "golang": "Go", "cargo": "crates.io", "gem": "RubyGems",
	"nuget": "NuGet", "composer": "Packagist", "hex": "Hex", "pub": "Pub", "deb": "Debian", "apk": "Alpine",
	"rpm": "Red Hat", "conan": "ConanCenter", "swift": "SwiftURL", "cran": "CRAN", "hackage": "Hackage",
}

// typeOf is ecosystemOf reversed.
var typeOf = func() map[string]string {
	out := map[string]string{}
	for t, e := range ecosystemOf {
		out[e] = t
	}
	return out
}()

// New makes a component of a package URL (its version, or version when
// the URL has none), canonical.
func New(purl, version, relation string, licenses []string) (Component, error) {
	p, err := ParsePURL(purl)
	if err != nil {
		return Component{}, err
	}
	if p.Version == "" {
		p.Version = strings.TrimSpace(version)
	}
	return build(p, relation, licenses)
}

// FromEcosystem makes a component of an OSV ecosystem, package name and
// version (what OSV-Scanner and govulncheck report): the name is split as
// the purl type names packages (Maven's group:artifact, a scoped npm name,
// a Go module path).
func FromEcosystem(ecosystem, name, version, relation string) (Component, error) {
	eco, _, _ := strings.Cut(ecosystem, ":") // "Debian:12" is Debian
	typ, ok := typeOf[eco]
	if !ok {
		return Component{}, fmt.Errorf("%w: no package URL type for ecosystem %q", ErrInvalidPURL, ecosystem)
	}
	ns, n := "", strings.TrimSpace(name)
	switch typ {
	case "maven":
		ns, n, _ = strings.Cut(n, ":")
		if n == "" {
			return Component{}, fmt.Errorf("%w: Maven package %q is not group:artifact", ErrInvalidPURL, name)
		}
	case "npm", "golang", "composer":
		if i := strings.LastIndex(n, "/"); i > 0 {
			ns, n = n[:i], n[i+1:]
		}
	}
	raw := packageurl.NewPackageURL(typ, ns, n, strings.TrimSpace(version), nil, "").ToString()
	return New(raw, "", relation, nil)
}

func build(p PURL, relation string, licenses []string) (Component, error) {
	if p.Version == "" {
		return Component{}, fmt.Errorf("%w: no version", ErrInvalidPURL)
	}
	if len(p.Version) > MaxVersionBytes || strings.ContainsFunc(p.Version, badRune) {
		return Component{}, fmt.Errorf("%w: bad version", ErrInvalidPURL)
	}
	c := Component{PURL: p.String(), Package: p.Package(), Type: p.Type, Namespace: p.Namespace, Name: p.Name,
		Version: p.Version, Ecosystem: p.Ecosystem(), Relation: relation, Licenses: cleanLicenses(licenses)}
	if len(c.PURL) > MaxPURLBytes {
		return Component{}, fmt.Errorf("%w: longer than %d bytes", ErrInvalidPURL, MaxPURLBytes)
	}
	if c.Relation != Direct && c.Relation != Transitive {
		c.Relation = Unknown
	}
	return c, nil
}

// cleanLicenses keeps at most MaxLicenses distinct, bounded, printable
// licence ids in their order.
func cleanLicenses(ls []string) []string {
	var out []string
	for _, l := range ls {
		l = strings.TrimSpace(l)
		if l == "" || l == "NOASSERTION" || l == "NONE" || len(l) > MaxLicenseBytes || !utf8.ValidString(l) ||
			strings.ContainsFunc(l, func(r rune) bool { return unicode.IsControl(r) }) || slices.Contains(out, l) {
			continue
		}
		if out = append(out, l); len(out) == MaxLicenses {
			break
		}
	}
	return out
}

// Set collects the components of one upload: one per package URL (the
// first seen wins, a direct relation wins over another), bounded by
// MaxComponents; what cannot be read as a component is skipped.
type Set struct {
	byPURL map[string]int
	list   []Component
}

// Add takes c into the set; false once the set is full.
func (s *Set) Add(c Component) bool {
	if s.byPURL == nil {
		s.byPURL = map[string]int{}
	}
	if i, ok := s.byPURL[c.PURL]; ok {
		old := &s.list[i]
		if c.Relation == Direct || old.Relation == Unknown {
			old.Relation = c.Relation
		}
		if len(old.Licenses) == 0 {
			old.Licenses = c.Licenses
		}
		return true
	}
	if len(s.list) == MaxComponents {
		return false
	}
	s.byPURL[c.PURL] = len(s.list)
	s.list = append(s.list, c)
	return true
}

// List is the set's components sorted by package URL.
func (s *Set) List() []Component {
	out := slices.Clone(s.list)
	slices.SortFunc(out, func(a, b Component) int { return strings.Compare(a.PURL, b.PURL) })
	if out == nil {
		out = []Component{}
	}
	return out
}
