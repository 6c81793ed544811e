package norm

import (
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/cleantext"
)

// A decomposed and a composed spelling of one name are one path.
func TestPathNFC(t *testing.T) {
	for _, in := range []string{"src/caf\u00e9.go", "src/cafe\u0301.go", "src/cafe%CC%81.go"} {
		if got, problem := Path(in); got != "src/caf\u00e9.go" || problem != "" {
			t.Errorf("Path(%q) = %q, %q", in, got, problem)
		}
	}
}

// A report path with control or bidi control characters, raw or
// percent-encoded, is kept with them written out; the stored path is one
// /code-upload takes as it is (the edge's text rule holds and Path gives
// it back unchanged), so the file can be uploaded under the path the issue
// shows. A path holding a percent escape after decoding is stored too, but
// is not Path's fixed point: its file cannot be uploaded.
func TestPathCleansControlCharacters(t *testing.T) {
	cases := map[string]string{
		"src/evil\x1b[31m\u202e.go":       "src/evil<U+001B>[31m<U+202E>.go",
		"src/a%00b%07c%7f%c2%85%e2%81%a6": "src/a<U+0000>b<U+0007>c<U+007F><U+0085><U+2066>",
		"file:src/%1b%5b2J.py":            "src/<U+001B>[2J.py",
		"src/bad%ff.go":                   "src/bad\uFFFD.go",
		"src\\win\t\u009b.cs":             "src/win<U+0009><U+009B>.cs",
		"./a/../b/%e2%80%aeexe.gpj":       "b/<U+202E>exe.gpj",
	}
	for in, want := range cases {
		got, problem := Path(in)
		if got != want || problem != "" {
			t.Errorf("Path(%q) = %q, %q; want %q", in, got, problem, want)
			continue
		}
		if again, problem := Path(got); again != got || problem != "" {
			t.Errorf("Path(%q) = %q, %q: the stored path is not uploadable as it is", got, again, problem)
		}
		if _, err := cleantext.Line("path", got); err != nil {
			t.Errorf("the edge refuses the stored path %q: %v", got, err)
		}
	}
	// Escaping the repository stays refused once characters are written
	// out: the escapes hold no slash or dot.
	for _, in := range []string{"../\x1b.go", "%2e%2e/%1b.go", "/abs/\u202e.go"} {
		if got, problem := Path(in); got != "" || problem == "" {
			t.Errorf("Path(%q) = %q, %q; want it refused", in, got, problem)
		}
	}
	// Written out before the length check: past MaxPath it is refused as
	// too long rather than stored over the key's bound.
	if got, problem := Path(strings.Repeat("\x00", MaxPath/4)); got != "" || problem != TooLong {
		t.Errorf("long path: %q, %q", got, problem)
	}
	// Documented limit: a percent escape that survives decoding is decoded
	// again by the upload, so that file cannot be sent.
	if got, _ := Path("src/100%2541.txt"); got != "src/100%41.txt" {
		t.Fatalf("double escape: %q", got)
	} else if again, _ := Path(got); again == got {
		t.Errorf("Path(%q) is now a fixed point: update Path's documentation", got)
	}
}
