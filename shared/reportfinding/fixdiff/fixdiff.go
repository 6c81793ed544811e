// Package fixdiff applies a scanner's own fix (reportfinding.Fix) to the file
// the run uploaded with its report and writes what an issue shows of it:
// a unified diff (`--- a/<path>`, `+++ b/<path>`, 3 lines of context) that
// `patch -p1` applies to that file, and the file as changed. A fix is
// offered only when it applies as written: every replacement changes the
// finding's file, every region lies inside it and holds what the report
// says it deletes, no two overlap, and what the change leaves is what the
// report says it leaves. The diff is rendered by go-udiff (a copy of the
// Go tools' internal diff package).
package fixdiff

import (
	"errors"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/reportfinding"
)

// Bounds. An issue item holds its fix beside its texts (some 17 KB at
// most, characters the text rule writes out aside), and the issue write
// path commits up to 100 items in one DynamoDB transaction, whose items may
// total 4 MB, counting them, not their bytes: an issue with its fix stays
// near 40 KB. The scan's budget bounds the work and the writes of a report
// of 25,000 results with fixes.
const (
	// ContextLines of unchanged text surround each hunk of a diff.
	ContextLines = 3
	// MaxDiff bounds a diff: a larger one is not offered.
	MaxDiff = 16 << 10
	// MaxKept bounds what an issue keeps of a fix: its diff, explanation
	// and full code. The full code is left out when it does not fit.
	MaxKept = 24 << 10
	// MaxSpan bounds the text (whole lines, context included) that one
	// group of a fix's changes spans: a larger one makes a diff past
	// MaxDiff, so it is refused before it is read.
	MaxSpan = 64 << 10
	// MaxScanBytes is a scan's budget: every fix tried pays the bytes of
	// the lines it reads, every fix kept its diff and full code; past it,
	// no more fixes are tried.
	MaxScanBytes = 32 << 20
)

// Reasons a fix is not offered.
var (
	ErrNoReplacement = errors.New("the fix carries no replacement")
	ErrOtherFile     = errors.New("the fix changes another file than the finding's")
	ErrOutside       = errors.New("a region lies outside the file")
	ErrPosition      = errors.New("a position falls inside a character, or cannot be read in its unit")
	ErrAmbiguous     = errors.New("a position's unit is not said and the text before it is not ASCII")
	ErrDeleted       = errors.New("a region does not hold the text the report says the fix deletes")
	ErrLines         = errors.New("the change does not leave the lines the report says it leaves")
	ErrOverlap       = errors.New("two regions overlap")
	ErrNoChange      = errors.New("the fix changes nothing")
	ErrTooLarge      = errors.New("the fix spans or changes more than its bound")
	ErrNotText       = errors.New("the diff holds text the report text rule would alter")
	ErrBudget        = errors.New("the scan's fixes are past their budget")
)

// Budget is what one scan's fixes may still cost, in bytes.
type Budget struct{ left int }

// NewBudget is a scan's budget, MaxScanBytes.
func NewBudget() *Budget { return &Budget{left: MaxScanBytes} }

func (b *Budget) pay(n int) error {
	if n > b.left {
		b.left = 0
		return ErrBudget
	}
	b.left -= n
	return nil
}

// Apply applies fix to f, the file its finding names, and sets fix.Diff
// and fix.FullCode; when the fix does not apply, or is past a bound, it
// leaves both empty and says why. FullCode is left empty, the diff
// offered, when the changed file does not fit MaxKept or holds text the
// report text rule would alter (the diff shows only lines that keep it).
func Apply(fix *reportfinding.Fix, f *File, b *Budget) error {
	fix.Diff, fix.FullCode = "", ""
	edits, err := f.edits(fix.Replacements, b)
	if err != nil {
		return err
	}
	diff, err := f.diff(edits, b)
	if err != nil {
		return err
	}
	full := f.fullCode(edits, MaxKept-len(diff)-len(fix.Explanation))
	if err := b.pay(len(diff) + len(full)); err != nil {
		return err
	}
	fix.Diff, fix.FullCode = diff, full
	return nil
}

// edit replaces text[start:end] of the file by text; lines is what the
// report says the change leaves from the start of start's line, "" when
// it does not say.
type edit struct {
	start, end int
	text       string
	lines      string
}

// edits resolves the replacements to byte edits in file order, without
// the ones that change nothing.
func (f *File) edits(reps []reportfinding.Replacement, b *Budget) ([]edit, error) {
	if len(reps) == 0 {
		return nil, ErrNoReplacement
	}
	var out []edit
	for _, r := range reps {
		if r.Path != f.path {
			return nil, ErrOtherFile
		}
		e, err := f.resolve(r, b)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b edit) int { return a.start - b.start })
	for n := 1; n < len(out); n++ {
		if out[n].start < out[n-1].end {
			return nil, ErrOverlap
		}
	}
	out = slices.DeleteFunc(out, func(e edit) bool { return f.text[e.start:e.end] == e.text })
	if len(out) == 0 {
		return nil, ErrNoChange
	}
	return out, nil
}

// fullCode is the file with the edits applied, "" when it is longer than
// room or holds text the report text rule would alter.
func (f *File) fullCode(edits []edit, room int) string {
	size := len(f.text)
	for _, e := range edits {
		size += len(e.text) - (e.end - e.start)
	}
	if size > room {
		return ""
	}
	full := apply(f.text, 0, edits)
	if cleantext.VisibleLines(full) != full {
		return ""
	}
	return full
}

// apply applies edits (in file order, offsets of the whole file) to text,
// which starts at offset base of the file.
func apply(text string, base int, edits []edit) string {
	var b strings.Builder
	last := 0
	for _, e := range edits {
		b.WriteString(text[last : e.start-base])
		b.WriteString(e.text)
		last = e.end - base
	}
	b.WriteString(text[last:])
	return b.String()
}
