package cleantext

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode/utf8"
)

// The rules of the account fields people type: names and email addresses.
// They were the accounts group's own (its handlers run them after the
// edge's Line check); they live here so that the operator, which writes
// the same companies, users and keys from outside the API, holds its
// input to the very same rules.

// Name checks a required single-line name as the API does: Line's rules
// on the text without its surrounding ASCII white space (as the edge
// checks body members, so a C1 control at an end is not trimmed away
// unseen), then trimmed, 1 to max characters after NFC normalization. It
// returns the name trimmed and NFC-normalized.
func Name(field, s string, max int) (string, error) {
	v, err := Line(field, trimASCII(s))
	if err != nil {
		return "", err
	}
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return "", &Error{field, "is required"}
	case utf8.RuneCountInString(v) > max:
		return "", &Error{field, fmt.Sprintf("must be at most %d characters", max)}
	}
	return v, nil
}

// Email checks a required email address: Line's rules (net/mail takes any
// non-ASCII character, bidi controls included, as part of an address),
// then a plain address of at most max bytes, without a display name or
// angle brackets, exactly as net/mail reads it.
func Email(field, s string, max int) (string, error) {
	v, err := Line(field, trimASCII(s))
	if err != nil {
		return "", err
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", &Error{field, "is required"}
	}
	a, err := mail.ParseAddress(v)
	if len(v) > max || err != nil || a.Address != v || a.Name != "" {
		return "", &Error{field, fmt.Sprintf("must be a plain email address of at most %d characters", max)}
	}
	return v, nil
}

// trimASCII trims the white space a handler trims, and only that: the
// edge's rule (httpapi.trimASCII), so U+0085 at an end is still refused.
func trimASCII(s string) string { return strings.Trim(s, " \t\r\n") }
