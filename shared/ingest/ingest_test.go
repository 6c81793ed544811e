package ingest

import "testing"

// Suppression comments are cut from the code an identity is made of.
func TestWithoutSuppressions(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`key := md5.Sum(b) // #nosec G401 -- cache key`, `key := md5.Sum(b) `},
		{`eval(x)  # nosemgrep: python.eval`, `eval(x)  `},
		{`s := "#"; f() //nolint:gosec`, `s := "#"; f() `},
		{`i--; g() /* #nosec */`, `i--; g() `},
		{"a := 1 // #nosec\nb := 2", "a := 1 \nb := 2"},
		{`x := "#nosec"`, `x := "`}, // in a string too: still one identity per line
		{`no comment here`, `no comment here`},
	} {
		if got := withoutSuppressions(c.in); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
