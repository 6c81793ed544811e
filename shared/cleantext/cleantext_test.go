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
