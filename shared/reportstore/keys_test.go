package reportstore

import (
	"strings"
	"testing"
)

// A source key has one length whatever the path (S3 keys stop at 1,024
// bytes, local file names at 255), and distinct paths have distinct keys.
func TestSourceKeyLength(t *testing.T) {
	long := strings.Repeat("a", 255) + "/" + strings.Repeat("b", 255) + "/" + strings.Repeat("é", 200)
	keys := map[string]string{}
	for _, p := range []string{"main.go", "src/main.go", "src/Main.go", long} {
		k := SourceKey(12, "0d7a7b43-1f2e-4c55-9a1b-2c3d4e5f6a01", p)
		if !strings.HasPrefix(k, SourcePrefix(12, "0d7a7b43-1f2e-4c55-9a1b-2c3d4e5f6a01")) || len(k) != len(SourcePrefix(12, "0d7a7b43-1f2e-4c55-9a1b-2c3d4e5f6a01"))+64 {
			t.Errorf("%q: key %q", p, k)
		}
		if other, dup := keys[k]; dup {
			t.Errorf("%q and %q share key %q", p, other, k)
		}
		keys[k] = p
	}
}
