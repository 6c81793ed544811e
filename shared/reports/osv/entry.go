package osv

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/reports/norm"
)

// Entry is the part of an OSV record (https://ossf.github.io/osv-schema/)
// that findings need. Minimal structs rather than the schema's Go bindings:
// those are protobuf types whose JSON decoding brings protobuf's runtime
// into the upload function.
type Entry struct {
	ID               string          `json:"id"`
	Aliases          []string        `json:"aliases"`
	Summary          string          `json:"summary"`
	Details          string          `json:"details"`
	Severity         []Severity      `json:"severity"`
	Affected         []Affected      `json:"affected"`
	DatabaseSpecific json.RawMessage `json:"database_specific"`
}

// Severity is one severity[] entry: a CVSS vector by its type.
type Severity struct {
	Type  string `json:"type"`
	Score string `json:"score"`
}

// Affected is one affected[] entry.
type Affected struct {
	Package struct {
		Name      string `json:"name"`
		Ecosystem string `json:"ecosystem"`
	} `json:"package"`
	Ranges []struct {
		// Type is SEMVER, ECOSYSTEM or GIT (commit hashes, no versions).
		Type   string `json:"type"`
		Events []struct {
			Introduced   string `json:"introduced"`
			Fixed        string `json:"fixed"`
			LastAffected string `json:"last_affected"`
		} `json:"events"`
	} `json:"ranges"`
	// Versions lists affected versions one by one.
	Versions []string `json:"versions"`
}

// Score returns the entry's CVSS base score computed from its vectors
// (v3 first, then v4, then v2), 0 when it has none that parses.
func (e Entry) Score() float64 {
	for _, typ := range []string{"CVSS_V3", "CVSS_V4", "CVSS_V2"} {
		for _, s := range e.Severity {
			if s.Type == typ {
				if score, ok := norm.CVSSScore(s.Score); ok {
					return score
				}
			}
		}
	}
	return 0
}

// SeverityWord is database_specific.severity (GitHub's advisories write
// LOW, MODERATE, HIGH, CRITICAL), normalised, or "".
func (e Entry) SeverityWord() string {
	var ds struct {
		Severity any `json:"severity"`
	}
	if json.Unmarshal(e.DatabaseSpecific, &ds) != nil {
		return ""
	}
	s, _ := ds.Severity.(string)
	return norm.SeverityWord(s)
}

// FixedFor returns the lowest fixed version above version among the
// entry's ranges for the package, else the lowest fixed version, else "".
func (e Entry) FixedFor(name, version string) string {
	var best, lowest string
	for _, a := range e.Affected {
		if a.Package.Name != "" && a.Package.Name != name {
			continue
		}
		for _, r := range a.Ranges {
			for _, ev := range r.Events {
				f := ev.Fixed
				if f == "" {
					continue
				}
				if lowest == "" || CompareVersions(f, lowest) < 0 {
					lowest = f
				}
				if CompareVersions(f, version) > 0 && (best == "" || CompareVersions(f, best) < 0) {
					best = f
				}
			}
		}
	}
	if best != "" {
		return best
	}
	return lowest
}

// CompareVersions orders two version strings the way most ecosystems
// agree on: a leading v ignored, dot/dash/plus separated parts compared
// numerically when both are numbers, else as text. It is an
// approximation for picking a fix version, not an ecosystem's exact order.
func CompareVersions(a, b string) int {
	pa, pb := split(a), split(b)
	for i := 0; i < len(pa) || i < len(pb); i++ {
		if i >= len(pa) {
			return -1
		}
		if i >= len(pb) {
			return 1
		}
		x, xerr := strconv.ParseUint(pa[i], 10, 64)
		y, yerr := strconv.ParseUint(pb[i], 10, 64)
		switch {
		case xerr == nil && yerr == nil:
			if x != y {
				if x < y {
					return -1
				}
				return 1
			}
		case pa[i] != pb[i]:
			return strings.Compare(pa[i], pb[i])
		}
	}
	return 0
}

func split(v string) []string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	return strings.FieldsFunc(v, func(r rune) bool { return r == '.' || r == '-' || r == '+' || r == '_' })
}

// IDs lists primary ids then aliases, once each, in order; CVE is the
// first CVE among them.
func IDs(lists ...[]string) (ids []string, cve string) {
	seen := map[string]bool{}
	for _, l := range lists {
		for _, id := range l {
			id = strings.TrimSpace(id)
			if id == "" || seen[id] || len(ids) == 50 {
				continue
			}
			seen[id] = true
			ids = append(ids, norm.ClipID(id))
			if cve == "" && strings.HasPrefix(id, "CVE-") {
				cve = ids[len(ids)-1]
			}
		}
	}
	return ids, cve
}
