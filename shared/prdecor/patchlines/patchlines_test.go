package patchlines_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/prdecor/patchlines"
)

func TestAdded(t *testing.T) {
	for _, c := range []struct {
		name, patch string
		want        []int
	}{
		{"a new file", "@@ -0,0 +1,3 @@\n+a\n+b\n+c", []int{1, 2, 3}},
		{"a replaced line among context", "@@ -1,5 +1,7 @@\n package main\n \n-import \"fmt\"\n+import (\n+\t\"fmt\"\n+)\n \n func main() {", []int{3, 4, 5}},
		{"two hunks", "@@ -1,2 +1,2 @@\n-x\n+y\n z\n@@ -40,3 +40,4 @@ func f() {\n a\n+b\n c\n d", []int{1, 41}},
		{"no newline marker", "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file", []int{1}},
		{"a deleted file", "@@ -1,2 +0,0 @@\n-a\n-b", []int{}},
		{"empty", "", []int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := patchlines.Added(c.patch)
			if err != nil {
				t.Fatal(err)
			}
			if lines := slices.Sorted(maps.Keys(got)); !slices.Equal(lines, c.want) && !(len(lines) == 0 && len(c.want) == 0) {
				t.Fatalf("added %v, want %v", lines, c.want)
			}
		})
	}
}

func TestMalformedPatchesAreRefused(t *testing.T) {
	for _, p := range []string{
		"+a line before any hunk",
		"@@ nonsense @@\n+a",
		"@@ -1,1 +99999999999999999999,1 @@\n+a",
		"@@ -1 +1 @@\n*what",
		strings.Repeat("x", patchlines.MaxPatch+1),
	} {
		if _, err := patchlines.Added(p); err == nil {
			t.Errorf("%.40q was read", p)
		}
	}
}

// Whatever a host sends, reading it ends without a panic, and every line
// it names is a line number the patch could add.
func FuzzAdded(f *testing.F) {
	f.Add("@@ -1,5 +1,7 @@\n package main\n \n-import \"fmt\"\n+import (\n+\t\"fmt\"\n+)\n")
	f.Add("@@ -0,0 +1 @@\n+x\n\\ No newline at end of file")
	f.Add("@@ -1 +1 @@")
	f.Fuzz(func(t *testing.T, patch string) {
		got, err := patchlines.Added(patch)
		if err != nil {
			return
		}
		if len(got) > strings.Count(patch, "\n+")+1 {
			t.Fatalf("%d lines added by a patch with fewer '+' lines", len(got))
		}
		for l := range got {
			if l < 1 {
				t.Fatalf("line %d", l)
			}
		}
	})
}
