package fixdiff

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/reportfinding"
)

// File is an uploaded file as fixes read it: its text and where each line
// starts. A line ends after its "\n"; a file ending with one has an empty
// last line, where a fix may insert.
type File struct {
	path   string
	text   string
	starts []int
	ascii  int // length of the text's ASCII prefix
}

// NewFile indexes a file's lines once, for all the fixes of its findings.
func NewFile(path string, content []byte) *File {
	f := &File{path: path, text: string(content), starts: []int{0}}
	for i := 0; i < len(f.text); i++ {
		if f.text[i] == '\n' {
			f.starts = append(f.starts, i+1)
		}
	}
	f.ascii = len(f.text)
	for i := 0; i < len(f.text); i++ {
		if f.text[i] >= utf8.RuneSelf {
			f.ascii = i
			break
		}
	}
	return f
}

// lineOf is the 0-based line holding offset p.
func (f *File) lineOf(p int) int {
	return sort.Search(len(f.starts), func(i int) bool { return f.starts[i] > p }) - 1
}

// end is the offset after line i's "\n" (the file's end for its last
// line); contentEnd the offset of that "\n".
func (f *File) end(i int) int {
	if i+1 < len(f.starts) {
		return f.starts[i+1]
	}
	return len(f.text)
}

func (f *File) contentEnd(i int) int {
	if i+1 < len(f.starts) {
		return f.starts[i+1] - 1
	}
	return len(f.text)
}

// resolve turns a replacement into a byte edit of the file, checking what
// the report says the region holds; it pays for the lines it reads.
func (f *File) resolve(r reportfinding.Replacement, b *Budget) (edit, error) {
	start, end, err := f.region(r.Region, b)
	if err != nil {
		return edit{}, err
	}
	if r.Deleted != "" && f.text[start:end] != r.Deleted {
		return edit{}, ErrDeleted
	}
	e := edit{start: start, end: end, text: r.Inserted, lines: r.Lines}
	if r.Region.MaybeWholeLines {
		e = f.wholeLines(e)
	}
	return e, nil
}

// wholeLines reads e's text as the new text of the lines e's region lies
// on when it repeats what surrounds the region there (see
// reportfinding.Region.MaybeWholeLines).
func (f *File) wholeLines(e edit) edit {
	first, last := f.lineOf(e.start), f.lineOf(e.end)
	ls, le := f.starts[first], f.contentEnd(last)
	before, after := f.text[ls:e.start], f.text[e.end:le]
	if before == "" && after == "" {
		return e // both readings agree
	}
	if strings.HasPrefix(e.text, before) && strings.HasSuffix(e.text[len(before):], after) {
		e.start, e.end = ls, le
	}
	return e
}

// region is the byte range of a region.
func (f *File) region(r reportfinding.Region, b *Budget) (int, int, error) {
	if r.StartLine < 1 {
		return f.offsets(r)
	}
	endLine := max(r.EndLine, r.StartLine)
	if (r.EndLine != 0 && r.EndLine < r.StartLine) || endLine > len(f.starts) || r.StartColumn < 0 || r.EndColumn < 0 {
		return 0, 0, ErrOutside
	}
	first, last := r.StartLine-1, endLine-1
	read := f.contentEnd(first) - f.starts[first] + f.contentEnd(last) - f.starts[last]
	if read > 2*MaxSpan {
		return 0, 0, ErrTooLarge
	}
	if err := b.pay(read); err != nil {
		return 0, 0, err
	}
	start, err := f.column(first, max(r.StartColumn, 1), r.Unit)
	if err != nil {
		return 0, 0, err
	}
	end := f.contentEnd(last)
	if r.EndColumn > 0 {
		if end, err = f.column(last, r.EndColumn, r.Unit); err != nil {
			return 0, 0, err
		}
	}
	if end < start {
		return 0, 0, ErrOutside
	}
	return start, end, nil
}

// offsets is the byte range of a region given by offset and length. In
// another unit than bytes, the offsets are read only within the file's
// ASCII prefix, where every unit counts the same.
func (f *File) offsets(r reportfinding.Region) (int, int, error) {
	start, end := r.Offset, r.Offset+r.Length
	if start < 0 || r.Length < 0 || end > len(f.text) {
		return 0, 0, ErrOutside
	}
	if r.Unit != reportfinding.UnitBytes && end > f.ascii {
		return 0, 0, ErrAmbiguous
	}
	if !boundary(f.text, start) || !boundary(f.text, end) {
		return 0, 0, ErrPosition
	}
	return start, end, nil
}

// column is the offset of 1-based column col of 0-based line i, counted
// in unit; the column after the line's last character is its end.
func (f *File) column(i, col int, unit reportfinding.Unit) (int, error) {
	ls := f.starts[i]
	line, n := f.text[ls:f.contentEnd(i)], col-1
	switch unit {
	case reportfinding.UnitBytes, reportfinding.UnitUnknown:
		if n > len(line) {
			return 0, ErrOutside
		}
		if unit == reportfinding.UnitUnknown && !isASCII(line[:n]) {
			return 0, ErrAmbiguous
		}
		if !boundary(line, n) {
			return 0, ErrPosition
		}
		return ls + n, nil
	}
	at, units := 0, 0
	for units < n && at < len(line) {
		r, size := utf8.DecodeRuneInString(line[at:])
		units++
		if unit == reportfinding.UnitUTF16 && r > 0xFFFF {
			units++ // a surrogate pair
		}
		at += size
	}
	switch {
	case units < n:
		return 0, ErrOutside
	case units > n:
		return 0, ErrPosition // inside a surrogate pair
	}
	return ls + at, nil
}

// boundary tells whether offset n of s starts a character (or ends s).
func boundary(s string, n int) bool {
	return n == len(s) || utf8.RuneStart(s[n])
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
