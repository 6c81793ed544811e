package triagemodel

import "strings"

// Ecosystems are the package ecosystems a rule may name: OSV's ecosystem
// names (what govulncheck, OSV-Scanner and the CycloneDX reader store on
// SCA findings), and the package URL types the CycloneDX reader maps to
// names OSV lacks (RPM, CocoaPods, ConanCenter, conda).
var Ecosystems = []string{
	"AlmaLinux", "Alpine", "Android", "Bioconductor", "Bitnami", "Chainguard", "CocoaPods", "ConanCenter", "conda",
	"CRAN", "crates.io", "Debian", "GHC", "GitHub Actions", "Go", "Hackage", "Hex", "Linux", "Mageia", "Maven",
	"MinimOS", "npm", "NuGet", "openEuler", "openSUSE", "OSS-Fuzz", "Packagist", "Photon OS", "Pub", "PyPI",
	"Red Hat", "Rocky Linux", "RPM", "RubyGems", "SUSE", "SwiftURL", "Ubuntu", "Wolfi",
}

// canonicalEcosystem names an ecosystem as Ecosystems spells it, whatever
// the case given.
func canonicalEcosystem(s string) (string, bool) {
	s = strings.TrimSpace(s)
	for _, e := range Ecosystems {
		if strings.EqualFold(e, s) {
			return e, true
		}
	}
	return "", false
}
