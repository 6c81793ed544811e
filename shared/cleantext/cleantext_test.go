package cleantext

import "testing"

func TestLine(t *testing.T) {
	ok := map[string]string{
		"Team A":      "Team A",
		"Cafe\u0301":  "Caf\u00e9", // decomposed é becomes one code point
		"Équipe 日本":   "Équipe 日本",
		"emoji 🛡️ ok": "emoji 🛡️ ok",
	}
	for in, want := range ok {
		if got, err := Line("name", in); err != nil || got != want {
			t.Errorf("Line(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"a\x00b", "bell\a", "tab\there", "new\nline", "del\x7f", "c1\u0085", "rtl\u202eevil", "iso\u2066x", "pdi\u2069", "bad\xffutf8"} {
		if _, err := Line("name", in); err == nil {
			t.Errorf("Line(%q) accepted", in)
		}
	}
	if got, err := Lines("comment", "line one\n\tline two"); err != nil || got != "line one\n\tline two" {
		t.Errorf("Lines: %q %v", got, err)
	}
	if _, err := Lines("comment", "cr\r"); err == nil {
		t.Error("Lines accepted a carriage return")
	}
	if _, err := Line("name", "x\x01"); err == nil || err.Error() != "name must not contain control characters (U+0001)" {
		t.Errorf("message: %v", err)
	}
}

// Each character the edge refuses is written out, invalid bytes become
// U+FFFD, the rest is kept and NFC-normalized.
func TestVisible(t *testing.T) {
	cases := []struct{ in, line, lines string }{
		{"plain text", "plain text", "plain text"},
		{"Cafe\u0301", "Caf\u00e9", "Caf\u00e9"},
		{"a\x00b", "a<U+0000>b", "a<U+0000>b"},
		{"\x1b[31mred\x1b[0m", "<U+001B>[31mred<U+001B>[0m", "<U+001B>[31mred<U+001B>[0m"},
		{"bell\a", "bell<U+0007>", "bell<U+0007>"},
		{"del\x7f", "del<U+007F>", "del<U+007F>"},
		{"c1\u0085\u009b", "c1<U+0085><U+009B>", "c1<U+0085><U+009B>"},
		{"rtl\u202eevil\u202c", "rtl<U+202E>evil<U+202C>", "rtl<U+202E>evil<U+202C>"},
		{"iso\u2066x\u2069", "iso<U+2066>x<U+2069>", "iso<U+2066>x<U+2069>"},
		{"tab\there", "tab<U+0009>here", "tab\there"},
		{"one\ntwo", "one<U+000A>two", "one\ntwo"},
		{"crlf\r\nlf\ncr\rend\r", "crlf<U+000D><U+000A>lf<U+000A>cr<U+000D>end<U+000D>", "crlf\nlf\ncr\nend\n"},
		{"bad\xffutf8\xc3", "bad\uFFFDutf8\uFFFD", "bad\uFFFDutf8\uFFFD"},
		{"kept \uFFFD and \u200b", "kept \uFFFD and \u200b", "kept \uFFFD and \u200b"},
		{"", "", ""},
	}
	for _, c := range cases {
		if got := Visible(c.in); got != c.line {
			t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := VisibleLines(c.in); got != c.lines {
			t.Errorf("VisibleLines(%q) = %q, want %q", c.in, got, c.lines)
		}
	}
}

// FuzzVisible holds Visible to the edge's rule for any input: its output
// is what Line accepts and returns unchanged, it agrees with Line on what
// Line accepts, and it is idempotent; the same for VisibleLines and Lines.
func FuzzVisible(f *testing.F) {
	for _, s := range []string{"a\x00b", "\x1b[31m", "rtl\u202e", "x\r\ny\r", "\xff\xfe", "e\u0301\u0000\u0301", "\u0085", "tab\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, form := range []struct {
			name    string
			visible func(string) string
			check   func(string, string) (string, error)
		}{{"Visible", Visible, Line}, {"VisibleLines", VisibleLines, Lines}} {
			v := form.visible(s)
			if got, err := form.check("f", v); err != nil || got != v {
				t.Fatalf("%s(%q) = %q, which the edge answers %q, %v", form.name, s, v, got, err)
			}
			if want, err := form.check("f", s); err == nil && v != want {
				t.Fatalf("%s(%q) = %q, the edge keeps %q", form.name, s, v, want)
			}
			if again := form.visible(v); again != v {
				t.Fatalf("%s is not idempotent: %q then %q", form.name, v, again)
			}
		}
	})
}
