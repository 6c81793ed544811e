package ingest

import "testing"

// Suppression comments are cut from the code an identity is made of.
func TestWithoutSuppressions(t *testing.T) {
	for _, c := range []struct{ path, in, want string }{
		{"a.go", `key := md5.Sum(b) // #nosec G401 -- cache key`, `key := md5.Sum(b) `},
		{"a.py", `eval(x)  # nosemgrep: python.eval`, `eval(x)  `},
		{"a.py", `url = "http://x"  # nosemgrep`, `url = "http://x"  `},
		{"a.go", `s := "#"; f() //nolint:gosec`, `s := "#"; f() `},
		{"a.go", `f() // see #12 nolint`, `f() `},
		{"a.c", `g(); /* NOLINT */`, `g(); `},
		{"a.sql", `SELECT 1 -- nosemgrep`, `SELECT 1 `},
		{"a.go", "a := 1 // #nosec\nb := 2", "a := 1 \nb := 2"},
		{"a.go", `x := "#nosec"`, `x := "`}, // in a string too: still one identity per line
		{"a.go", `no comment here`, `no comment here`},
	} {
		if got := withoutSuppressions(c.path, c.in); got != c.want {
			t.Errorf("%s %q: got %q, want %q", c.path, c.in, got, c.want)
		}
	}
}
