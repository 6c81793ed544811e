package vex

import (
	"strings"

	packageurl "github.com/package-url/packageurl-go"
)

// Package is a package a statement is about, from its package URL: the
// ecosystem and name as OSV and the SCA findings name them (Maven's
// group:artifact, namespace/name elsewhere but for the distribution
// namespaces of deb, apk and rpm), and its version ("" for every version).
type Package struct {
	PURL      string `json:"purl"`
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	Version   string `json:"version,omitempty"`
}

// MaxPURLBytes bounds one package URL.
const MaxPURLBytes = 2048

// IsPURL reports whether s is meant as a package URL (its scheme is pkg:).
func IsPURL(s string) bool { return len(s) >= 4 && strings.EqualFold(s[:4], "pkg:") }

// purlEcosystem names a package URL type as OSV names its ecosystem (as
// shared/reports/cyclonedx reads the components of a report).
var purlEcosystem = map[string]string{
	"npm": "npm", "pypi": "PyPI", "maven": "Maven", "golang": "Go", "cargo": "crates.io", "gem": "RubyGems",
	"nuget": "NuGet", "composer": "Packagist", "hex": "Hex", "pub": "Pub", "deb": "Debian", "apk": "Alpine",
	"rpm": "RPM", "cocoapods": "CocoaPods", "swift": "SwiftURL", "conan": "ConanCenter", "conda": "conda",
	"github": "GitHub Actions",
}

// distroTypes are the types whose namespace is a distribution, not part
// of the package's name.
var distroTypes = map[string]bool{"deb": true, "apk": true, "rpm": true}

// ParsePURL reads the package URL s, found at field (a JSON pointer): an
// *Error naming field when it is malformed.
func ParsePURL(field, s string) (Package, error) {
	if len(s) > MaxPURLBytes {
		return Package{}, errorf(field, "the package URL exceeds %d bytes", MaxPURLBytes)
	}
	p, err := packageurl.FromString(s)
	if err != nil || p.Name == "" {
		return Package{}, errorf(field, "malformed package URL %q", visible(clip(s, 200)))
	}
	eco := purlEcosystem[p.Type]
	if eco == "" {
		eco = p.Type
	}
	name := p.Name
	switch {
	case p.Type == "maven" && p.Namespace != "":
		name = p.Namespace + ":" + p.Name
	case p.Namespace != "" && !distroTypes[p.Type]:
		name = p.Namespace + "/" + p.Name
	}
	return Package{PURL: visible(s), Ecosystem: eco, Name: name, Version: p.Version}, nil
}
