package githost

import "testing"

const twoHunks = `@@ -1,3 +1,3 @@
 a
-b
+B
 c
@@ -10,2 +10,3 @@ func f() {
 x
+y
 z
\ No newline at end of file`

func TestLocateFindsLinesOnEitherSide(t *testing.T) {
	hunks, err := parsePatch(twoHunks)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line int
		side string
		hunk string // "" when the line is not in the diff
	}{
		{2, "RIGHT", "@@ -1,3 +1,3 @@\n a\n-b\n+B"},
		{2, "LEFT", "@@ -1,3 +1,3 @@\n a\n-b"},
		{11, "RIGHT", "@@ -10,2 +10,3 @@ func f() {\n x\n+y"},
		{12, "RIGHT", "@@ -10,2 +10,3 @@ func f() {\n x\n+y\n z"},
		{11, "LEFT", "@@ -10,2 +10,3 @@ func f() {\n x\n+y\n z"},
		{5, "RIGHT", ""},
		{13, "RIGHT", ""},
	} {
		got, ok := locate(hunks, tc.line, tc.side)
		if ok != (tc.hunk != "") || got != tc.hunk {
			t.Errorf("line %d %s: %q, %v; want %q", tc.line, tc.side, got, ok, tc.hunk)
		}
	}
}

func TestPositionCountsLaterHunkHeaders(t *testing.T) {
	hunks, _ := parsePatch(twoHunks)
	for pos, want := range map[int]struct {
		line int
		side string
	}{1: {1, "RIGHT"}, 2: {2, "LEFT"}, 3: {2, "RIGHT"}, 6: {10, "RIGHT"}, 7: {11, "RIGHT"}} {
		line, side, ok := atPosition(hunks, pos)
		if !ok || line != want.line || side != want.side {
			t.Errorf("position %d: %d %s %v, want %v", pos, line, side, ok, want)
		}
	}
	if _, _, ok := atPosition(hunks, 5); ok {
		t.Error("position 5 is the second hunk's header, not a line")
	}
}

func TestCountChanges(t *testing.T) {
	if a, d := countChanges(twoHunks); a != 2 || d != 1 {
		t.Errorf("additions %d deletions %d", a, d)
	}
	if _, err := parsePatch("not a patch"); err == nil {
		t.Error("a patch without a hunk header was accepted")
	}
}
