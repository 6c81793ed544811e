package norm

import "testing"

// A decomposed and a composed spelling of one name are one path.
func TestPathNFC(t *testing.T) {
	for _, in := range []string{"src/caf\u00e9.go", "src/cafe\u0301.go", "src/cafe%CC%81.go"} {
		if got, problem := Path(in); got != "src/caf\u00e9.go" || problem != "" {
			t.Errorf("Path(%q) = %q, %q", in, got, problem)
		}
	}
}
