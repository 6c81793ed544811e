package fixdiff

import (
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/reportfinding"
)

// FuzzApply: whatever the file and the replacements (one, or two when
// line2 is above 0), Apply never panics, and a fix it offers is a diff
// that patches the file (every hunk in place, with its context) into its
// full code when given, and into a text holding what the fix inserts.
func FuzzApply(f *testing.F) {
	f.Add("a\nb\nc\n", 2, 1, 2, 2, "B", uint8(1), false, 0, 0, 0, 0, "")
	f.Add("x := \"é\" + y\n", 1, 10, 1, 11, "z", uint8(2), false, 0, 0, 0, 0, "")
	f.Add("  inputs[x] = 1\n", 1, 3, 1, 12, "  inputs.get(x) = 1", uint8(1), true, 0, 0, 0, 0, "")
	f.Add("\n\n\nb\n\n\n\n", 4, 2, 4, 2, "\n", uint8(3), false, 1, 1, 1, 1, "// x\n")
	f.Add("no newline", 1, 11, 0, 0, "\nmore", uint8(0), false, 1, 1, 1, 3, "")
	f.Add(strings.Repeat("l\n", 40), 3, 1, 3, 2, "L", uint8(1), false, 30, 1, 31, 1, "")
	f.Fuzz(func(t *testing.T, src string, line, col, endLine, endCol int, text string, unit uint8, whole bool,
		line2, col2, endLine2, endCol2 int, text2 string) {
		u := reportfinding.Unit(unit % 4)
		reps := []reportfinding.Replacement{{Path: "f.go", Inserted: text, Region: reportfinding.Region{
			StartLine: line, StartColumn: col, EndLine: endLine, EndColumn: endCol, Unit: u, MaybeWholeLines: whole}}}
		if line2 > 0 {
			reps = append(reps, reportfinding.Replacement{Path: "f.go", Inserted: text2, Region: reportfinding.Region{
				StartLine: line2, StartColumn: col2, EndLine: endLine2, EndColumn: endCol2, Unit: u}})
		}
		fix := &reportfinding.Fix{Replacements: reps}
		if Apply(fix, NewFile("f.go", []byte(src)), NewBudget()) != nil {
			if fix.Diff != "" || fix.FullCode != "" {
				t.Fatalf("a refused fix keeps %q", fix.Diff)
			}
			return
		}
		got, err := patchText(fix.Diff, src)
		if err != nil {
			t.Fatalf("%v\n%s", err, fix.Diff)
		}
		if fix.FullCode != "" && got != fix.FullCode {
			t.Fatalf("the diff patches to %q, the full code is %q", got, fix.FullCode)
		}
		for _, r := range reps {
			if got == src || !strings.Contains(got, r.Inserted) {
				t.Fatalf("patched %q into %q, inserting %q", src, got, r.Inserted)
			}
		}
	})
}
