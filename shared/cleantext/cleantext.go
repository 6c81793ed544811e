// Package cleantext is the one check of text that people read (names,
// titles, comments, patterns, tags): valid UTF-8, no control characters
// (C0, DEL, C1; newline and tab only in multi-line fields), no bidi
// embedding, override or isolate characters, and NFC-normalized so two
// spellings of one name are one name.
package cleantext

import (
	"fmt"
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
		switch {
		case multiline && (r == '\n' || r == '\t'):
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			return "", &Error{field, fmt.Sprintf("must not contain control characters (U+%04X)", r)}
		case (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			return "", &Error{field, fmt.Sprintf("must not contain bidirectional control characters (U+%04X)", r)}
		}
	}
	return norm.NFC.String(s), nil
}
