// Package norm holds what every report parser normalises the same way:
// paths (repo-relative or refused), text lengths, and severities mapped to
// urgency codes.
package norm

import (
	"strings"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/reportfinding"
)

// MaxText bounds a title, message or snippet kept per finding, so a
// verbose scanner cannot push an issue item towards DynamoDB's 400 KB
// limit.
const MaxText = 2000

// MaxID bounds a tool name, rule id or advisory id: they take part in an
// issue's identity and its keys.
const MaxID = 512

// Clip shortens s to at most MaxText bytes on a rune boundary.
func Clip(s string) string { return ClipTo(s, MaxText) }

// ClipID shortens an identifier to at most MaxID bytes.
func ClipID(s string) string { return ClipTo(strings.TrimSpace(s), MaxID) }

// ClipTo shortens s to at most n bytes on a rune boundary.
func ClipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// UrgencyOfScore maps a CVSS-like score (0-10) as GitHub does for
// security-severity: >= 9.0 critical, >= 7.0 high, >= 4.0 medium, else low.
func UrgencyOfScore(score float64) string {
	switch {
	case score >= 9.0:
		return reportfinding.Critical
	case score >= 7.0:
		return reportfinding.High
	case score >= 4.0:
		return reportfinding.Medium
	}
	return reportfinding.Low
}

// Severity names a CVSS score's qualitative rating (CVSS v3: 9.0 critical,
// 7.0 high, 4.0 medium, above 0 low).
func Severity(score float64) string {
	switch {
	case score >= 9.0:
		return "CRITICAL"
	case score >= 7.0:
		return "HIGH"
	case score >= 4.0:
		return "MEDIUM"
	case score > 0:
		return "LOW"
	}
	return "UNSPECIFIED"
}

// SeverityWord reads a severity word as scanners write it (critical, high,
// moderate/medium, low, in any case) into the Dependency form, or "".
func SeverityWord(s string) string {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "CRITICAL":
		return "CRITICAL"
	case "HIGH", "IMPORTANT":
		return "HIGH"
	case "MEDIUM", "MODERATE":
		return "MEDIUM"
	case "LOW", "MINOR", "INFO", "NEGLIGIBLE":
		return "LOW"
	}
	return ""
}

// UrgencyOfSeverity maps a Dependency severity to an urgency code;
// UNSPECIFIED and unknown are medium.
func UrgencyOfSeverity(sev string) string {
	switch sev {
	case "CRITICAL":
		return reportfinding.Critical
	case "HIGH":
		return reportfinding.High
	case "LOW":
		return reportfinding.Low
	}
	return reportfinding.Medium
}

// MaxFindings bounds the results of one report of a format without runs,
// at GitHub's limit for one SARIF run.
const MaxFindings = 25_000

// FirstLine is the first non-empty line of s, clipped to 200 bytes: a title
// made from a message.
func FirstLine(s string) string {
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return ClipTo(l, 200)
		}
	}
	return ""
}
