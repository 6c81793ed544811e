package cleantext

import (
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	ok := map[string]string{
		"  Ada ":               "Ada",
		"Jose\u0301":           "José",                 // NFC before counting and storing
		strings.Repeat("é", 5): strings.Repeat("é", 5), // characters, not bytes
		"\u00a0Ada\u00a0":      "Ada",                  // no-break spaces trimmed, as the API trims them
	}
	for in, want := range ok {
		if got, err := Name("first_name", in, 5); err != nil || got != want {
			t.Errorf("Name(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":                 "first_name is required",
		" \t ":             "first_name is required",
		"abcdef":           "first_name must be at most 5 characters",
		"a\x1b[2J":         "first_name must not contain control characters (U+001B)",
		"ab\u202ecd":       "first_name must not contain bidirectional control characters (U+202E)",
		"ab\u0085":         "first_name must not contain control characters (U+0085)", // not trimmed away
		"\xff":             "first_name must be valid UTF-8",
		"tab\tinside":      "first_name must not contain control characters (U+0009)",
		"new\nline inside": "first_name must not contain control characters (U+000A)",
	} {
		if _, err := Name("first_name", in, 5); err == nil || err.Error() != want {
			t.Errorf("Name(%q): %v, want %q", in, err, want)
		}
	}
}

func TestEmail(t *testing.T) {
	for in, want := range map[string]string{
		"ada@acme.test":       "ada@acme.test",
		" ada@acme.test\n":    "ada@acme.test",
		"a.b+c@sub.acme.test": "a.b+c@sub.acme.test",
	} {
		if got, err := Email("email", in, 254); err != nil || got != want {
			t.Errorf("Email(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	plain := "email must be a plain email address of at most 254 characters"
	for in, want := range map[string]string{
		"":                                      "email is required",
		"not-an-email":                          plain,
		"not an email":                          plain,
		"Ada <ada@acme.test>":                   plain,
		"<ada@acme.test>":                       plain,
		"ada@acme.test, bob@acme.test":          plain,
		strings.Repeat("a", 250) + "@acme.test": plain,
		"ada\u202e@acme.test":                   "email must not contain bidirectional control characters (U+202E)",
		"ada\x1b@acme.test":                     "email must not contain control characters (U+001B)",
		"ada@acme.test\u0085":                   "email must not contain control characters (U+0085)",
	} {
		if _, err := Email("email", in, 254); err == nil || err.Error() != want {
			t.Errorf("Email(%q): %v, want %q", in, err, want)
		}
	}
}
