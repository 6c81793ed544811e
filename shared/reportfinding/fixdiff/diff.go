package fixdiff

import (
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/acme/codescan-api/shared/cleantext"
)

// segment is whole lines a..z (0-based) of the file and their new text
// once the edits on them applied: what one change of the diff replaces.
type segment struct {
	a, z  int
	edits []edit
	neu   string
}

// diff is the unified diff of the edits. Segments close enough for their
// hunks to touch are diffed together on the lines they span with their
// context, the hunks then numbered as in the whole file, so a diff costs
// what it shows, not the file's size. Hunks follow the edits' lines (not a
// fresh line diff, which may align repeated lines, blank ones, outside the
// edit and leave a hunk short of context: GNU patch then anchors it at the
// file's end).
func (f *File) diff(edits []edit, b *Budget) (string, error) {
	segs, err := f.segments(edits)
	if err != nil {
		return "", err
	}
	u := udiff.UnifiedDiff{From: "a/" + f.path, To: "b/" + f.path}
	added := 0 // lines the groups before added to the file (removed: below 0)
	for len(segs) > 0 {
		n := 1 // segs[:n] are one group: the lines between two within twice the context
		for n < len(segs) && segs[n].a-segs[n-1].z <= 2*ContextLines+1 {
			n++
		}
		hunks, more, err := f.hunks(u, segs[:n], b)
		if err != nil {
			return "", err
		}
		for _, h := range hunks {
			h.ToLine += added
		}
		u.Hunks = append(u.Hunks, hunks...)
		added += more
		segs = segs[n:]
	}
	diff := u.String()
	switch {
	case diff == "":
		return "", ErrNoChange
	case len(diff) > MaxDiff:
		return "", ErrTooLarge
	case cleantext.VisibleLines(diff) != diff:
		return "", ErrNotText
	}
	return diff, nil
}

// hunks diffs a group of segments on their lines with their context, and
// returns the hunks numbered as in the file (the lines added before the
// group aside) and the lines the group adds.
func (f *File) hunks(u udiff.UnifiedDiff, segs []segment, b *Budget) ([]*udiff.Hunk, int, error) {
	w0, w1 := max(segs[0].a-ContextLines, 0), min(segs[len(segs)-1].z+ContextLines, len(f.starts)-1)
	ws, we := f.starts[w0], f.end(w1)
	if we-ws > MaxSpan {
		return nil, 0, ErrTooLarge
	}
	if err := b.pay(we - ws); err != nil {
		return nil, 0, err
	}
	var edits []udiff.Edit
	added := 0
	for _, s := range segs {
		ls, le := f.starts[s.a], f.end(s.z)
		old := f.text[ls:le]
		added += strings.Count(s.neu, "\n") - strings.Count(old, "\n")
		if cut, o, n := trim(old, s.neu); o != n {
			edits = append(edits, udiff.Edit{Start: ls + cut - ws, End: ls + cut + len(o) - ws, New: n})
		}
	}
	window, err := udiff.ToUnifiedDiff(u.From, u.To, f.text[ws:we], edits, ContextLines)
	if err != nil {
		return nil, 0, err
	}
	for _, h := range window.Hunks {
		h.FromLine += w0
		h.ToLine += w0
	}
	return window.Hunks, added, nil
}

// segments are the edits (in file order) as replacements of whole lines:
// edits on a common line go together, and a segment whose new text would
// run into the next line (it ends without a "\n" before the file's end)
// takes that line in.
func (f *File) segments(edits []edit) ([]segment, error) {
	var out []segment
	for n := 0; n < len(edits); {
		s := segment{a: f.lineOf(edits[n].start), z: f.lastLine(edits[n])}
		m := n
		for {
			for ; m < len(edits) && f.lineOf(edits[m].start) <= s.z; m++ {
				s.z = max(s.z, f.lastLine(edits[m]))
			}
			ls, le := f.starts[s.a], f.end(s.z)
			if le-ls > MaxSpan {
				return nil, ErrTooLarge
			}
			s.edits, s.neu = edits[n:m], apply(f.text[ls:le], ls, edits[n:m])
			if s.neu == "" || strings.HasSuffix(s.neu, "\n") || le == len(f.text) {
				break
			}
			s.z++
		}
		if err := f.checkLines(s); err != nil {
			return nil, err
		}
		out = append(out, s)
		n = m
	}
	return out, nil
}

// lastLine is the last line an edit changes: the one holding its end,
// or the one before when the edit ends just after a "\n" with text that
// ends a line too.
func (f *File) lastLine(e edit) int {
	if e.end > e.start && f.text[e.end-1] == '\n' && (e.text == "" || strings.HasSuffix(e.text, "\n")) {
		return f.lineOf(e.end - 1)
	}
	return f.lineOf(e.end)
}

// checkLines checks each edit's lines (what the report says the change
// leaves from the start of the edit's line) against the segment's new
// text.
func (f *File) checkLines(s segment) error {
	ls := f.starts[s.a]
	for n, e := range s.edits {
		if e.lines == "" {
			continue
		}
		// Where the edit's line starts in the new text: moved by the edits
		// before it, refused when one of them spans it.
		lineStart := f.starts[f.lineOf(e.start)]
		from := lineStart - ls
		for _, k := range s.edits[:n] {
			if k.start < lineStart {
				if k.end > lineStart {
					return ErrLines
				}
				from += len(k.text) - (k.end - k.start)
			}
		}
		if !strings.HasPrefix(s.neu[from:], e.lines) {
			return ErrLines
		}
	}
	return nil
}

// trim cuts the whole lines old and new begin and end with alike: it
// returns how many bytes it cut in front and what is left of each.
func trim(old, neu string) (int, string, string) {
	cut := 0
	for {
		i, j := strings.IndexByte(old, '\n'), strings.IndexByte(neu, '\n')
		if i < 0 || j < 0 || old[:i+1] != neu[:j+1] {
			break
		}
		old, neu, cut = old[i+1:], neu[j+1:], cut+i+1
	}
	for {
		lo, ln := lastLine(old), lastLine(neu)
		if lo == "" || lo != ln {
			break
		}
		old, neu = old[:len(old)-len(lo)], neu[:len(neu)-len(ln)]
	}
	return cut, old, neu
}

// lastLine is the last line of s, its "\n" included.
func lastLine(s string) string {
	if s == "" {
		return ""
	}
	return s[strings.LastIndexByte(s[:len(s)-1], '\n')+1:]
}
