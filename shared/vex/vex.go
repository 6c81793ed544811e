// Package vex reads VEX documents (Vulnerability Exploitability eXchange:
// CycloneDX 1.4 to 1.6 JSON with vulnerabilities[].analysis, and OpenVEX
// v0.2.0 JSON), each checked against its published JSON schema, into
// statements: a status (OpenVEX's four: not_affected, affected, fixed,
// under_investigation) about advisories (an id and its aliases) in
// packages (package URLs). It matches statements to SCA findings (match.go)
// and says what each statement does to a finding's status (effect.go).
// It knows nothing of HTTP or of the store: functions/vex reads the
// findings and writes the changes through the store's SCA status path.
package vex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/cleantext"
)

// Formats of a document.
const (
	FormatCycloneDX = "cyclonedx"
	FormatOpenVEX   = "openvex"
)

// Formats lists the formats a caller may name.
var Formats = []string{FormatCycloneDX, FormatOpenVEX}

// Limits of one document: its size (the route's body limit) and its
// statements (OpenVEX statements, CycloneDX vulnerabilities).
const (
	MaxDocumentBytes = 5 << 20
	MaxStatements    = 10_000
	// MaxIDBytes bounds a document id as it is shown and stored in reasons.
	MaxIDBytes = 512
)

// Statuses of a statement (OpenVEX's; CycloneDX analysis states map onto
// them, see cyclonedx.go).
const (
	NotAffected        = "not_affected"
	Affected           = "affected"
	Fixed              = "fixed"
	UnderInvestigation = "under_investigation"
)

// Document is a VEX document read and checked.
type Document struct {
	Format string
	// SpecVersion is CycloneDX's specVersion or the OpenVEX context's
	// version (v0.2.0).
	SpecVersion string
	// ID names the document in reasons and the audit log: OpenVEX's @id,
	// CycloneDX's serialNumber (with "/<version>" when it has one), else
	// "sha256:" and the first 16 bytes of the document's digest in hex.
	ID         string
	Statements []Statement
}

// Statement is one statement: a status about an advisory in packages.
type Statement struct {
	// Pointer is the statement's JSON pointer in the document
	// (/statements/3, /vulnerabilities/0).
	Pointer string
	// Vulnerability is the advisory id as the document names it; IDs are
	// it and its aliases, canonical (see CanonicalID), without duplicates.
	Vulnerability string
	IDs           []string
	Status        string
	// Justification is OpenVEX's justification or CycloneDX's analysis
	// justification, as written; Detail is the impact statement (OpenVEX
	// impact_statement, else status_notes; CycloneDX analysis.detail),
	// Action OpenVEX's action_statement or CycloneDX's responses.
	Justification, Detail, Action string
	// Packages are the packages the statement is about; Unresolved the
	// product references that name no package (a bom-ref whose component
	// has no purl, an OpenVEX product named by something other than a
	// purl, a version range), each with why.
	Packages   []Package
	Unresolved []Unresolved
	// At orders statements about one finding: the latest wins, then the
	// later in the document (OpenVEX statement or document timestamp;
	// CycloneDX analysis.lastUpdated, the vulnerability's updated, or the
	// metadata's timestamp). Zero when the document says nothing.
	At time.Time
	// order is the statement's position in the document.
	order int
}

// Unresolved is a product reference that names no package.
type Unresolved struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason"`
}

// Error is a document refused: the JSON pointer (or parameter) at fault
// and what is wrong. TooLarge errors are past a limit (413), the others
// bad input (400).
type Error struct {
	Field    string
	Problem  string
	TooLarge bool
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + ": " + e.Problem
}

func errorf(field, format string, args ...any) *Error {
	return &Error{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// Parse reads a VEX document of format ("" to detect it from the
// document: CycloneDX's bomFormat, OpenVEX's @context), checked against
// its published schema. Every refusal is an *Error naming the field.
func Parse(data []byte, format string) (Document, error) {
	if len(data) > MaxDocumentBytes {
		return Document{}, &Error{Problem: fmt.Sprintf("the document exceeds %d bytes", MaxDocumentBytes), TooLarge: true}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return Document{}, errorf("", "the document is not a JSON object")
	}
	if format == "" {
		var err error
		if format, err = detect(top); err != nil {
			return Document{}, err
		}
	}
	var (
		doc Document
		err error
	)
	switch format {
	case FormatCycloneDX:
		doc, err = parseCycloneDX(data, top)
	case FormatOpenVEX:
		doc, err = parseOpenVEX(data, top)
	default:
		return Document{}, errorf("format", "must be one of %s", strings.Join(Formats, ", "))
	}
	if err != nil {
		return Document{}, err
	}
	doc.Format = format
	if doc.ID == "" {
		sum := sha256.Sum256(data)
		doc.ID = "sha256:" + hex.EncodeToString(sum[:16])
	}
	doc.ID = clip(cleantext.Visible(doc.ID), MaxIDBytes)
	return doc, nil
}

// detect names the format of a document by its top-level members.
func detect(top map[string]json.RawMessage) (string, error) {
	_, cdx := top["bomFormat"]
	_, ovx := top["@context"]
	switch {
	case cdx && !ovx:
		return FormatCycloneDX, nil
	case ovx && !cdx:
		return FormatOpenVEX, nil
	}
	return "", errorf("format", "the document is neither CycloneDX (bomFormat) nor OpenVEX (@context); send format=%s", strings.Join(Formats, " or "))
}

// decode decodes data into v, numbers kept as json.Number.
func decode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	return d.Decode(v)
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !runeStart(s[n]) {
		n--
	}
	return s[:n]
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }

// parseTime reads an RFC 3339 time; zero when it is not one.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
