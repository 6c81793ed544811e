package cwe

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

func TestLookupKnown(t *testing.T) {
	cases := []struct {
		id         int
		name       string
		descPrefix string
	}{
		{79, "Improper Neutralization of Input During Web Page Generation ('Cross-site Scripting')",
			"The product does not neutralize or incorrectly neutralizes user-controllable input before it is placed in output that is used as a web page"},
		{89, "Improper Neutralization of Special Elements used in an SQL Command ('SQL Injection')",
			"The product constructs all or part of an SQL command using externally-influenced input"},
		{22, "Improper Limitation of a Pathname to a Restricted Directory ('Path Traversal')",
			"The product uses external input to construct a pathname"},
		{798, "Use of Hard-coded Credentials",
			"The product contains hard-coded credentials, such as a password or cryptographic key."},
		// A category: scanners tag findings with these too.
		{310, "Cryptographic Issues", "Weaknesses in this category are related to the design and implementation of data confidentiality"},
	}
	for _, c := range cases {
		e, ok := Lookup(c.id)
		if !ok {
			t.Errorf("Lookup(%d) found nothing", c.id)
			continue
		}
		if e.ID != c.id || e.Name != c.name || !strings.HasPrefix(e.Description, c.descPrefix) {
			t.Errorf("Lookup(%d) = %+v, want name %q and description starting %q", c.id, e, c.name, c.descPrefix)
		}
	}
}

func TestLookupUnknown(t *testing.T) {
	// 1000 and 699 are views, left out of the catalogue on purpose.
	for _, id := range []int{0, -79, 1000, 699, 99999, 1 << 40} {
		if e, ok := Lookup(id); ok {
			t.Errorf("Lookup(%d) = %+v, want nothing", id, e)
		}
	}
}

func TestCatalogueContents(t *testing.T) {
	all := catalogue()
	// Version 4.15 has 964 weaknesses and 409 categories.
	if len(all) != 964+409 {
		t.Errorf("%d entries, want %d", len(all), 964+409)
	}
	for id, e := range all {
		if e.ID != id || e.Name == "" || e.Description == "" ||
			strings.ContainsAny(e.Name+e.Description, "\t\n") {
			t.Errorf("entry %d malformed: %+v", id, e)
		}
	}
}

func TestParse(t *testing.T) {
	good := map[string]int{
		"CWE-79":        79,
		"cwe-79":        79,
		"Cwe-89":        89,
		"79":            79,
		"  CWE-798\t\n": 798,
		" 22 ":          22,
		"CWE-079":       79,
		"CWE-1004":      1004,
	}
	for in, want := range good {
		if got, ok := Parse(in); !ok || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d, true", in, got, ok, want)
		}
	}
	bad := []string{
		"", " ", "CWE-", "CWE", "CWE-0", "0", "000", "-79", "CWE--79", "+79", "CWE-+79",
		"CWE79", "CWE 79", "CWE- 79", "79a", "7 9", "CVE-79", "xss", "CWE-79.5", "١٢", // Arabic-Indic digits
		"99999999999999999999999", "CWE-79CWE-79",
	}
	for _, in := range bad {
		if got, ok := Parse(in); ok {
			t.Errorf("Parse(%q) = %d, true; want rejection", in, got)
		}
	}
}

func TestFormatID(t *testing.T) {
	if got := FormatID(79); got != "CWE-79" {
		t.Errorf("FormatID(79) = %q", got)
	}
	for _, id := range []int{1, 22, 1004} {
		if got, ok := Parse(FormatID(id)); !ok || got != id {
			t.Errorf("Parse(FormatID(%d)) = %d, %v", id, got, ok)
		}
	}
}

func gz(t *testing.T, text string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDecode(t *testing.T) {
	m, err := decode(bytes.NewReader(gz(t, Version+"\n7\tA name\tA text, with tabs gone.\n")))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Entry{7, "A name", "A text, with tabs gone."}); len(m) != 1 || m[7] != want {
		t.Errorf("decode = %+v, want only %+v", m, want)
	}

	bad := map[string][]byte{
		"not gzip":      []byte(Version + "\n"),
		"empty":         gz(t, ""),
		"other version": gz(t, "4.14\n7\tA\tB\n"),
		"two fields":    gz(t, Version+"\n7\tA\n"),
		"bad id":        gz(t, Version+"\nx\tA\tB\n"),
		"zero id":       gz(t, Version+"\n0\tA\tB\n"),
		"truncated":     gz(t, Version+"\n7\tA\tB\n")[:20],
	}
	for name, b := range bad {
		if _, err := decode(bytes.NewReader(b)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}
