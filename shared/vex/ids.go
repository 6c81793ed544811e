package vex

import (
	"slices"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/cleantext"
)

// CanonicalID is an advisory id as ids are compared: trimmed, the last
// path segment of a URL (https://nvd.nist.gov/vuln/detail/CVE-2021-44228
// is CVE-2021-44228), upper case (CVE-, GHSA-, GO-, PYSEC-, RUSTSEC- and
// other OSV ids compare case-insensitively); "" for an empty one.
func CanonicalID(id string) string {
	id = strings.TrimSpace(id)
	if strings.Contains(id, "://") {
		id = strings.TrimRight(id, "/")
		id = id[strings.LastIndex(id, "/")+1:]
		if q := strings.IndexAny(id, "?#"); q >= 0 {
			id = id[:q]
		}
	}
	return strings.ToUpper(id)
}

// canonicalIDs are ids canonical, without empty ones and duplicates, in
// their first order.
func canonicalIDs(ids []string) []string {
	var out []string
	for _, id := range ids {
		if c := CanonicalID(id); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// visible is document text made safe to show and store (shared/cleantext),
// cut to MaxTextBytes.
func visible(s string) string { return clip(cleantext.Visible(strings.TrimSpace(s)), MaxTextBytes) }

// visibleLines is visible for text of several lines.
func visibleLines(s string) string {
	return clip(cleantext.VisibleLines(strings.TrimSpace(s)), MaxTextBytes)
}

// MaxTextBytes bounds a text of a statement as it is kept (a
// justification, an impact statement).
const MaxTextBytes = 1000

func firstOf(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

func firstTime(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}
