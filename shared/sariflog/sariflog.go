// Package sariflog holds the parts of a SARIF 2.1.0 log that the product
// writes (the findings export and a scan's report), and how an urgency
// reads in SARIF: its level and its security-severity score. The logs are
// written by hand rather than with go-sarif's types, which marshal every
// array and index they declare (empty arrays, -1 sentinels, a default
// kind).
package sariflog

import "strconv"

// FingerprintKey names the issue fingerprint in a result's
// partialFingerprints: the key the scan reports read, so a log uploaded
// again keeps its issues' identity.
const FingerprintKey = "codescanFingerprint/v1"

// Message is a SARIF message with plain text.
type Message struct {
	Text string `json:"text"`
}

// Region is where in a file a result lies.
type Region struct {
	StartLine int `json:"startLine"`
}

// Artifact names the file of a location.
type Artifact struct {
	URI string `json:"uri"`
}

// Physical is a location in a file.
type Physical struct {
	ArtifactLocation Artifact `json:"artifactLocation"`
	Region           *Region  `json:"region,omitempty"`
}

// Location is a result's location.
type Location struct {
	PhysicalLocation Physical `json:"physicalLocation"`
}

// At is the location of uri, at line when it is positive (the whole file
// otherwise).
func At(uri string, line int) Location {
	loc := Location{PhysicalLocation: Physical{ArtifactLocation: Artifact{URI: uri}}}
	if line > 0 {
		loc.PhysicalLocation.Region = &Region{StartLine: line}
	}
	return loc
}

// Level is the SARIF level of an urgency (CR, HI, ME, LO).
func Level(urgency string) string {
	switch urgency {
	case "CR", "HI":
		return "error"
	case "ME":
		return "warning"
	}
	return "note"
}

// SecuritySeverity is a security-severity score inside the urgency's band,
// as GitHub code scanning reads it.
func SecuritySeverity(urgency string) string {
	switch urgency {
	case "CR":
		return "9.5"
	case "HI":
		return "8.0"
	case "ME":
		return "5.5"
	}
	return "2.0"
}

// CWETags are a rule's tags for a CWE number: the tag GitHub code scanning
// links to the weakness.
func CWETags(cwe int) []string {
	return []string{"security", "external/cwe/cwe-" + strconv.Itoa(cwe)}
}
