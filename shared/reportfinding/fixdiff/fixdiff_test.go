package fixdiff

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/sarif"
	"github.com/acme/codescan-api/shared/reports/semgrep"
)

const (
	semgrepData = "../../reports/semgrep/testdata/autofix/"
	sarifData   = "../../reports/sarif/testdata/"
)

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// applied checks a fix that applies: its diff patches the original into
// its full code, which is want.
func applied(t *testing.T, fix *reportfinding.Fix, path, original, want string) {
	t.Helper()
	if err := Apply(fix, NewFile(path, []byte(original)), NewBudget()); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if fix.FullCode != want {
		t.Fatalf("%s: full code\n%s\nwant\n%s", path, fix.FullCode, want)
	}
	if got := patch(t, fix.Diff, original); got != want {
		t.Fatalf("%s: the diff patches to\n%s\nwant\n%s", path, got, want)
	}
}

// Semgrep's JSON, from its own autofix tests (testdata/autofix/README.md):
// each result's fix, applied to the scanned file by line and column, is
// what Semgrep's byte offsets say (the file with that match replaced), its
// fixed_lines hold, and all of a file's fixes together are Semgrep's own
// fixed file.
func TestSemgrepJSONFixes(t *testing.T) {
	for name, ext := range map[string]string{"defaulthttpclient": ".java", "utf-8": ".py", "django-none-password-default": ".py",
		"csv-writer": ".py", "delete-partial-line": ".py"} {
		report := read(t, semgrepData+name+".json")
		rep, err := semgrep.Parse([]byte(report))
		if err != nil {
			t.Fatal(err)
		}
		original, all := read(t, semgrepData+name+ext), read(t, semgrepData+name+ext)
		offsets := semgrepOffsets(t, report)
		for n := len(rep.Findings) - 1; n >= 0; n-- { // from the end, so offsets hold
			f, o := rep.Findings[n], offsets[n]
			if f.Fix == nil || len(f.Fix.Replacements) != 1 || !strings.HasSuffix(f.Fix.Explanation, "Autofix: Semgrep rule suggested fix") {
				t.Fatalf("%s: result %d: %+v", name, n, f.Fix)
			}
			applied(t, f.Fix, f.Path, original, original[:o.start]+o.fix+original[o.end:])
			all = all[:o.start] + o.fix + all[o.end:]
		}
		fixed := read(t, semgrepData+name+ext+"-fixed")
		if name == "delete-partial-line" {
			// Semgrep also drops the line a fix empties from its start
			// (Textedit.remove_newline_for_empty_replacement); its report
			// says only what the fix replaces.
			all = strings.Replace(all, "an entire line\nfoo(\n\n)", "an entire line\nfoo(\n)", 1)
		}
		if all != fixed {
			t.Fatalf("%s: all fixes give\n%s\nSemgrep's fixed file is\n%s", name, all, fixed)
		}
	}
}

type semgrepOffset struct {
	start, end int
	fix        string
}

// semgrepOffsets reads each result's byte offsets and fix: the positions
// Semgrep applies its fixes at, which the parser does not use (it reads
// lines and columns), so they check it.
func semgrepOffsets(t *testing.T, report string) []semgrepOffset {
	t.Helper()
	var out struct {
		Results []struct {
			Start, End struct{ Offset int }
			Extra      struct{ Fix string }
		}
	}
	if err := json.Unmarshal([]byte(report), &out); err != nil {
		t.Fatal(err)
	}
	var offs []semgrepOffset
	for _, r := range out.Results {
		offs = append(offs, semgrepOffset{r.Start.Offset, r.End.Offset, r.Extra.Fix})
	}
	return offs
}

// Semgrep's SARIF (its snapshot test_sarif_output_with_autofix) inserts
// the fixed lines where the match was: read as whole lines, each fix is
// the line Semgrep's own fix gives, and both are Semgrep's fixed file;
// read literally, they would write the line's text twice.
func TestSemgrepSARIFFixesAreWholeLines(t *testing.T) {
	rep, err := sarif.Parse([]byte(read(t, sarifData+"semgrep-autofix.sarif")))
	if err != nil {
		t.Fatal(err)
	}
	original, fixed := read(t, sarifData+"sources/autofix.py"), read(t, sarifData+"sources/autofix.py-fixed")
	originalLines, fixedLines := strings.SplitAfter(original, "\n"), strings.SplitAfter(fixed, "\n")
	if len(rep.Findings) != 2 {
		t.Fatalf("findings: %+v", rep.Findings)
	}
	for _, f := range rep.Findings {
		want := slicesWith(originalLines, f.Line-1, fixedLines[f.Line-1])
		applied(t, f.Fix, f.Path, original, want)
		if strings.Contains(f.Fix.FullCode, "= 1 = 1") || strings.Contains(f.Fix.FullCode, "if   if") {
			t.Fatalf("read literally: %s", f.Fix.FullCode)
		}
	}
}

func slicesWith(lines []string, n int, line string) string {
	out := append([]string(nil), lines...)
	out[n] = line
	return strings.Join(out, "")
}

// Staticcheck's SARIF (testdata/README.md): its S1003 fixes replace the
// strings.Index comparison, byte columns, in the files it scanned.
func TestStaticcheckFixes(t *testing.T) {
	for report, source := range map[string]string{"staticcheck.sarif": "modules/lintme/main.go",
		"staticcheck-ignored.sarif": "modules/suppressed/main.go"} {
		rep, err := sarif.Parse([]byte(read(t, sarifData+report)))
		if err != nil {
			t.Fatal(err)
		}
		original, fixes := read(t, sarifData+source), 0
		for _, f := range rep.Findings {
			if f.Fix == nil {
				continue
			}
			fixes++
			lines := strings.SplitAfter(original, "\n")
			r := f.Fix.Replacements[0]
			line := lines[r.Region.StartLine-1]
			want := slicesWith(lines, r.Region.StartLine-1, line[:r.Region.StartColumn-1]+r.Inserted+line[r.Region.EndColumn-1:])
			applied(t, f.Fix, f.Path, original, want)
			if !strings.Contains(f.Fix.Diff, "+\tif strings.Contains(") || f.Fix.Explanation != "Simplify use of strings.Index" {
				t.Fatalf("%s: %+v", report, f.Fix)
			}
		}
		if fixes == 0 {
			t.Fatalf("%s: no fix", report)
		}
	}
}

// gosec writes its suggestion as a fix whose change names no file: the
// explanation is kept, there is nothing to apply.
func TestGosecFixIsAnExplanation(t *testing.T) {
	rep, err := sarif.Parse([]byte(read(t, sarifData+"gosec-fix.sarif")))
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Findings[0]
	if f.Fix == nil || !strings.HasPrefix(f.Fix.Explanation, "Consider using os.Root") || f.Fix.Replacements != nil {
		t.Fatalf("gosec's fix: %+v", f.Fix)
	}
	err = Apply(f.Fix, NewFile(f.Path, []byte(read(t, sarifData+"modules/readfile/main.go"))), NewBudget())
	if !errors.Is(err, ErrNoReplacement) || f.Fix.Diff != "" {
		t.Fatalf("applied: %v %+v", err, f.Fix)
	}
}

// rep is a replacement of a.go by lines and columns, in bytes.
func rep(line, col, endLine, endCol int, text string) reportfinding.Replacement {
	return reportfinding.Replacement{Path: "a.go", Inserted: text,
		Region: reportfinding.Region{StartLine: line, StartColumn: col, EndLine: endLine, EndColumn: endCol, Unit: reportfinding.UnitBytes}}
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	return b.String()
}

// A fix that does not apply to the uploaded file as written is not
// offered, and says why.
func TestFixesThatDoNotApply(t *testing.T) {
	const src = "package a\n\nfunc f() {\n\tx := \"é\" + y\n}\n"
	unknown := rep(4, 12, 4, 13, "z")
	unknown.Region.Unit = reportfinding.UnitUnknown
	deleted := rep(4, 2, 4, 3, "z")
	deleted.Deleted = "y"
	lines := rep(4, 2, 4, 3, "z")
	lines.Lines = "\tz := \"é\" + x"
	other := rep(1, 1, 1, 1, "// x\n")
	other.Path = "b.go"
	utf16 := rep(4, 9, 4, 9, "z")
	utf16.Region.Unit = reportfinding.UnitUTF16
	for name, c := range map[string]struct {
		src  string
		reps []reportfinding.Replacement
		want error
	}{
		"no replacement":         {src, nil, ErrNoReplacement},
		"another file":           {src, []reportfinding.Replacement{other}, ErrOtherFile},
		"a line past the end":    {src, []reportfinding.Replacement{rep(7, 1, 7, 1, "x")}, ErrOutside},
		"a column past the line": {src, []reportfinding.Replacement{rep(3, 1, 3, 12, "x")}, ErrOutside},
		"an end before a start":  {src, []reportfinding.Replacement{rep(3, 5, 3, 2, "x")}, ErrOutside},
		"an end line before":     {src, []reportfinding.Replacement{rep(3, 1, 2, 1, "x")}, ErrOutside},
		"an offset past the end": {src, []reportfinding.Replacement{{Path: "a.go", Region: reportfinding.Region{Offset: 40, Length: 9, Unit: reportfinding.UnitBytes}}}, ErrOutside},
		"inside a character":     {src, []reportfinding.Replacement{rep(4, 9, 4, 9, "z")}, ErrPosition},
		"inside a surrogate pair": {"s := \"😊\"\n", []reportfinding.Replacement{func() reportfinding.Replacement {
			r := rep(1, 8, 1, 8, "z")
			r.Region.Unit = reportfinding.UnitUTF16
			return r
		}()}, ErrPosition},
		"unit unknown past non-ASCII": {src, []reportfinding.Replacement{unknown}, ErrAmbiguous},
		"chars past non-ASCII":        {src, []reportfinding.Replacement{{Path: "a.go", Region: reportfinding.Region{Offset: 30, Length: 1}}}, ErrAmbiguous},
		"other deleted text":          {src, []reportfinding.Replacement{deleted}, ErrDeleted},
		"other resulting lines":       {src, []reportfinding.Replacement{lines}, ErrLines},
		"overlapping regions":         {src, []reportfinding.Replacement{rep(4, 2, 4, 6, "a"), rep(4, 4, 4, 8, "b")}, ErrOverlap},
		"no change":                   {src, []reportfinding.Replacement{rep(1, 1, 1, 8, "package")}, ErrNoChange},
		"carriage returns":            {"a\r\nb\r\n", []reportfinding.Replacement{rep(1, 1, 1, 2, "c")}, ErrNotText},
		"a control character":         {"a\nb \x1b[31m\n", []reportfinding.Replacement{rep(1, 1, 1, 2, "c")}, ErrNotText},
		"a region over the bound":     {numbered(20000), []reportfinding.Replacement{rep(1, 1, 9000, 1, "x")}, ErrTooLarge},
		"a diff over the bound":       {numbered(3000), []reportfinding.Replacement{rep(1, 1, 2000, 1, "x")}, ErrTooLarge},
		"a line over the bound":       {strings.Repeat("x", 3*MaxSpan) + "\n", []reportfinding.Replacement{rep(1, 2, 1, 3, "y")}, ErrTooLarge},
	} {
		fix := &reportfinding.Fix{Explanation: "why", Replacements: c.reps}
		err := Apply(fix, NewFile("a.go", []byte(c.src)), NewBudget())
		if !errors.Is(err, c.want) || fix.Diff != "" || fix.FullCode != "" {
			t.Errorf("%s: %v, want %v; %q", name, err, c.want, fix.Diff)
		}
	}
	// The same positions in the units that read them apply.
	ok := rep(4, 12, 4, 13, "z") // bytes: "é" is two
	applied(t, &reportfinding.Fix{Replacements: []reportfinding.Replacement{ok}}, "a.go", src, strings.Replace(src, "+", "z", 1))
	utf16.Region.StartColumn, utf16.Region.EndColumn = 11, 12
	applied(t, &reportfinding.Fix{Replacements: []reportfinding.Replacement{utf16}}, "a.go", src, strings.Replace(src, "+", "z", 1))
	chars := reportfinding.Replacement{Path: "a.go", Inserted: "b", Region: reportfinding.Region{Offset: 8, Length: 1}}
	applied(t, &reportfinding.Fix{Replacements: []reportfinding.Replacement{chars}}, "a.go", src, strings.Replace(src, "package a", "package b", 1))
}

// Changes far apart are hunks of their own, numbered as in the whole file
// (the lines the first adds move the second), whatever the file's size;
// changes close together share a hunk. The file is past MaxKept: the diff
// is offered without the full code.
func TestHunks(t *testing.T) {
	src := numbered(5000)
	fix := &reportfinding.Fix{Replacements: []reportfinding.Replacement{
		rep(4000, 1, 4000, 10, "changed"), rep(2, 1, 2, 1, "new a\nnew b\n"), rep(4005, 6, 4005, 10, "X")}}
	want := strings.Replace(strings.Replace(strings.Replace(src, "line 4000\n", "changed\n", 1),
		"line 2\n", "new a\nnew b\nline 2\n", 1), "line 4005\n", "line X\n", 1)
	if err := Apply(fix, NewFile("a.go", []byte(src)), NewBudget()); err != nil {
		t.Fatal(err)
	}
	if got := patch(t, fix.Diff, src); got != want || fix.FullCode != "" {
		t.Fatalf("patched to the wrong file, or a full code past the bound (%d bytes)", len(fix.FullCode))
	}
	headers := regexp.MustCompile(`(?m)^@@ .* @@$`).FindAllString(fix.Diff, -1)
	if strings.Join(headers, "|") != "@@ -1,4 +1,6 @@|@@ -3997,12 +3999,12 @@" {
		t.Fatalf("hunks %v:\n%s", headers, fix.Diff)
	}
}

// A diff follows the lines the fix changes, also among repeated lines
// (where a fresh line diff may place an inserted blank line anywhere):
// every hunk keeps its context on both sides; lines a replacement writes
// again as they were are not shown as changed.
func TestHunksFollowTheChangedLines(t *testing.T) {
	src := "a\n\n\n\n\n\n\n\n\nb\n\n\n\n\n\n\n\nc\n"
	fix := &reportfinding.Fix{Replacements: []reportfinding.Replacement{rep(10, 2, 10, 2, "\n")}}
	applied(t, fix, "a.go", src, strings.Replace(src, "b\n", "b\n\n", 1))
	django := "def f():\n    x = 1\n    y = 2\n    z = 3\n    return x\n"
	same := &reportfinding.Fix{Replacements: []reportfinding.Replacement{rep(2, 5, 4, 10, "x = 1\n    y = 20\n    z = 3")}}
	applied(t, same, "a.go", django, strings.Replace(django, "y = 2\n", "y = 20\n", 1))
	if strings.Count(same.Diff, "\n-") != 1 {
		t.Fatalf("unchanged lines shown:\n%s", same.Diff)
	}
}

// The full code is the whole changed file only when it fits beside the
// diff and the explanation and keeps the text rule; the diff is offered
// either way.
func TestFullCodeWhenItFits(t *testing.T) {
	ff := "x := 1\n\n\n\n\n\n\n\n// \f page break\n"
	fix := &reportfinding.Fix{Replacements: []reportfinding.Replacement{rep(1, 6, 1, 7, "2")}}
	if err := Apply(fix, NewFile("a.go", []byte(ff)), NewBudget()); err != nil || fix.FullCode != "" {
		t.Fatalf("a form feed far from the change: %v, full code %q", err, fix.FullCode)
	}
	patch(t, fix.Diff, ff)
	room := strings.Repeat("// filler\n", (MaxKept-600)/10) + "x := 1\n"
	fix = &reportfinding.Fix{Explanation: strings.Repeat("e", 200), Replacements: []reportfinding.Replacement{rep(strings.Count(room, "\n"), 6, 0, 0, "2")}}
	if err := Apply(fix, NewFile("a.go", []byte(room)), NewBudget()); err != nil || fix.FullCode == "" {
		t.Fatalf("a file that fits: %v", err)
	}
	if kept := len(fix.Diff) + len(fix.FullCode) + len(fix.Explanation); kept > MaxKept {
		t.Fatalf("kept %d bytes", kept)
	}
	fix.Explanation = strings.Repeat("e", 1000)
	if err := Apply(fix, NewFile("a.go", []byte(room)), NewBudget()); err != nil || fix.FullCode != "" || fix.Diff == "" {
		t.Fatalf("a file that no longer fits: %v %d", err, len(fix.FullCode))
	}
}

// A scan's fixes share one budget: the lines each reads and what each
// keeps. Past it, no fix is offered.
func TestScanBudget(t *testing.T) {
	src := numbered(5000)
	b := NewBudget()
	file := NewFile("a.go", []byte(src))
	offered := 0
	for range MaxScanBytes / 100 {
		fix := &reportfinding.Fix{Replacements: []reportfinding.Replacement{rep(1000, 1, 0, 0, "changed")}}
		err := Apply(fix, file, b)
		if errors.Is(err, ErrBudget) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		offered++
	}
	// Each fix reads its line and 7 lines of context and keeps a diff of
	// about 200 bytes (the file is past MaxKept: no full code).
	if offered < MaxScanBytes/400 || offered > MaxScanBytes/200 {
		t.Fatalf("%d fixes offered", offered)
	}
	if err := Apply(&reportfinding.Fix{Replacements: []reportfinding.Replacement{rep(1, 1, 0, 0, "x")}}, file, b); !errors.Is(err, ErrBudget) {
		t.Fatalf("past the budget: %v", err)
	}
}
