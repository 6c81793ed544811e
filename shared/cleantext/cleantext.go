// Package cleantext is the one rule of text that people read (names,
// titles, comments, patterns, tags, and whatever a scanner report says):
// valid UTF-8, no control characters (C0, DEL, C1; newline and tab only in
// multi-line fields), no bidi embedding, override or isolate characters,
// and NFC-normalized so two spellings of one name are one name.
//
// Text people type at the edge is checked (Line, Lines) and refused when it
// breaks the rule. Text the service must keep whatever it holds (a scanner
// report's messages, rule ids and paths) is made to follow the same rule
// (Visible, VisibleLines), so that what the API answers, renders and
// exports never carries what the edge refuses.
package cleantext

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Error names the field and what is wrong with it.
type Error struct {
	Field   string
	Problem string
}

func (e *Error) Error() string { return e.Field + " " + e.Problem }

// Line checks single-line text and returns it NFC-normalized.
func Line(field, s string) (string, error) { return check(field, s, false) }

// Lines checks multi-line text (newline and tab allowed) and returns it
// NFC-normalized.
func Lines(field, s string) (string, error) { return check(field, s, true) }

func check(field, s string, multiline bool) (string, error) {
	if !utf8.ValidString(s) {
		return "", &Error{field, "must be valid UTF-8"}
	}
	for _, r := range s {
		if what := refused(r, multiline); what != "" {
			return "", &Error{field, fmt.Sprintf("must not contain %s (U+%04X)", what, r)}
		}
	}
	return norm.NFC.String(s), nil
}

// refused names the class of r when the rule refuses it in text of its
// kind, "" when it is allowed. Line, Lines and Visible share it, so the
// edge refuses exactly what Visible rewrites.
func refused(r rune, multiline bool) string {
	switch {
	case multiline && (r == '\n' || r == '\t'):
		return ""
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		return "control characters"
	case (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
		return "bidirectional control characters"
	}
	return ""
}

// Visible returns s as single-line text that Line accepts unchanged; it
// never fails. The rule, in order:
//
//   - each byte that is not part of valid UTF-8 becomes U+FFFD (the
//     replacement character: the byte names no character to show);
//   - each character Line refuses (C0 controls, tab and newline included,
//     DEL, C1 controls, bidi embeddings, overrides and isolates U+202A–
//     U+202E, U+2066–U+2069) becomes its code point written out in ASCII,
//     `<U+XXXX>` (ESC is `<U+001B>`, RLO `<U+202E>`);
//   - the result is NFC-normalized, as Line normalizes.
//
// Written out rather than removed or replaced by U+FFFD: a reader sees
// which character the report held (a Trojan Source finding quoting an RLO
// stays legible), two identifiers differing only by such characters stay
// two, and `<U+202E>` can be typed back into a filter. The escape holds no
// `/`, `\`, `%` or `.`, so in a path it never adds or removes a segment.
// A text Line accepts comes out exactly as Line returns it, and Visible of
// Visible's output is that output.
func Visible(s string) string { return visible(s, false) }

// VisibleLines is Visible for multi-line text (what Lines accepts):
// newline and tab stay, and a carriage return, alone or before a newline,
// becomes a newline (the line end it was) rather than `<U+000D>`.
func VisibleLines(s string) string { return visible(s, true) }

func visible(s string, multiline bool) string {
	if plainASCII(s, multiline) {
		return s // ASCII is NFC: the common case costs one pass, no copy
	}
	if follows(s, multiline) {
		return norm.NFC.String(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case multiline && r == '\r':
			b.WriteByte('\n')
			if strings.HasPrefix(s[i+1:], "\n") {
				size++
			}
		case refused(r, multiline) != "":
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return norm.NFC.String(b.String())
}

// plainASCII tells whether s is ASCII the rule keeps as it is.
func plainASCII(s string, multiline bool) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x7f:
			return false
		case c < 0x20 && !(multiline && (c == '\n' || c == '\t')):
			return false
		}
	}
	return true
}

// follows tells whether s already keeps the rule but for normalization,
// without allocating.
func follows(s string, multiline bool) bool {
	for i, r := range s {
		if (r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD")) || refused(r, multiline) != "" {
			return false
		}
	}
	return true
}
