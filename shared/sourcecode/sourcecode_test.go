package sourcecode

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	file := "one\ntwo\r\nthree\rfour\nfive\nsix\nseven\neight\nnine\nten\n"
	cases := []struct {
		name      string
		content   string
		line, end int
		ok        bool
		flagged   string
		start     int
		code      string
	}{
		{"middle, mixed line ends", file, 5, 0, true, "five", 2, "two\nthree\nfour\nfive\nsix\nseven\neight"},
		{"first line", file, 1, 1, true, "one", 1, "one\ntwo\nthree\nfour"},
		{"last line", file, 10, 12, true, "ten", 7, "seven\neight\nnine\nten"},
		{"region", file, 4, 6, true, "four\nfive\nsix", 1, "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine"},
		{"region capped", file, 1, 10, true, "one\ntwo\nthree\nfour\nfive", 1, "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight"},
		{"past the end", file, 11, 0, false, "", 0, ""},
		{"no line", file, 0, 0, false, "", 0, ""},
		{"empty file", "", 1, 0, false, "", 0, ""},
		{"blank line", "a\n\nb\n", 2, 0, true, "", 1, "a\n\nb"},
		{"no final newline", "a\nb", 2, 0, true, "b", 1, "a\nb"},
		{"invalid UTF-8", "x\xff\xfey\n", 1, 0, true, "x\uFFFDy", 1, "x\uFFFDy"},
	}
	for _, c := range cases {
		ex, ok := Cut([]byte(c.content), c.line, c.end)
		if ok != c.ok || ex.Flagged != c.flagged || ex.Start != c.start || ex.Code != c.code {
			t.Errorf("%s: got %v %+v, want %v %q %d %q", c.name, ok, ex, c.ok, c.flagged, c.start, c.code)
		}
	}
}

// A line of minified code is cut at a rune boundary and marked.
func TestCutLongLine(t *testing.T) {
	line := strings.Repeat("é", MaxLineBytes) // two bytes each
	ex, ok := Cut([]byte(line+"\n"), 1, 0)
	if !ok || !utf8.ValidString(ex.Flagged) || !strings.HasSuffix(ex.Flagged, "…") || len(ex.Flagged) > MaxLineBytes+len("…") {
		t.Fatalf("long line: %v %q", ok, ex.Flagged)
	}
}

// A NUL byte anywhere makes a file binary, past Git's first 8 KiB too.
func TestIsText(t *testing.T) {
	text := []byte(strings.Repeat("a = b\n", 2<<10))
	cases := []struct {
		name    string
		content []byte
		want    bool
	}{
		{"source", []byte("package main\n"), true},
		{"empty", nil, true},
		{"long source", text, true},
		{"Latin-1 and control characters", []byte("caf\xe9 \x1b[0m \x0c\n"), true},
		{"NUL first", []byte("\x00ELF"), false},
		{"NUL in 8 KiB", []byte("\x7fELF\x00"), false},
		{"NUL past 8 KiB", append(append([]byte{}, text[:9<<10]...), 0, 'x'), false},
		{"NUL at the end of 1 MiB", append([]byte(strings.Repeat("x", MaxFileBytes-1)), 0), false},
	}
	for _, c := range cases {
		if got := IsText(c.content); got != c.want {
			t.Errorf("%s: IsText = %v", c.name, got)
		}
	}
}

// Whatever the file and the region, Cut neither panics nor returns text
// that is not valid UTF-8, and the flagged lines are inside the excerpt.
func FuzzCut(f *testing.F) {
	f.Add([]byte("a\nb\r\nc\rd\n"), 2, 3)
	f.Add([]byte("\xff\n\n"), 1, 0)
	f.Add([]byte(""), 1, 1)
	f.Fuzz(func(t *testing.T, content []byte, line, end int) {
		ex, ok := Cut(content, line, end)
		if !ok {
			return
		}
		if !utf8.ValidString(ex.Code) || !strings.Contains(ex.Code, ex.Flagged) || ex.Start < 1 || ex.Start > line {
			t.Fatalf("Cut(%q, %d, %d) = %+v", content, line, end, ex)
		}
		if n := strings.Count(ex.Code, "\n") + 1; n > MaxFlaggedLines+2*ContextLines {
			t.Fatalf("%d lines", n)
		}
	})
}
