package reportfinding

import "github.com/acme/codescan-api/shared/cleantext"

// Bounds of a fix as a parser keeps it. A scanner's fix replaces a few
// regions (staticcheck's and Semgrep's replace one); a report of 25,000
// results with fixes stays within its own size, and ingestion's work per
// fix stays small.
const (
	// MaxFixReplacements is the number of replacements a fix may have.
	MaxFixReplacements = 32
	// MaxFixText bounds the text a fix's replacements carry (inserted,
	// deleted and resulting lines together), in bytes.
	MaxFixText = 16 << 10
)

// Fix is the change a scanner proposes for its finding (SARIF's
// result.fixes, Semgrep's extra.fix). Parsers fill Explanation and
// Replacements; ingestion, when the run uploaded the file, applies them and
// fills Diff and FullCode (package fixdiff).
type Fix struct {
	// Explanation is what the scanner says of the change ("" when nothing).
	Explanation string
	// Replacements are the changes, none when the report's fix cannot be
	// applied as written (it names no file, holds binary content or text
	// the report text rule would alter, or is past the bounds above): its
	// explanation is all that is kept.
	Replacements []Replacement
	// Diff is the unified diff of the change to the finding's file
	// (`--- a/<path>`, `+++ b/<path>`, 3 lines of context) and FullCode the
	// file as changed ("" when over fixdiff's bound); both "" until
	// ingestion applied the fix to the uploaded file, and when the fix does
	// not apply to it.
	Diff     string
	FullCode string
}

// Replacement replaces one region of a file by new text.
type Replacement struct {
	// Path is the file, repository-relative as the parser normalised it.
	Path     string
	Region   Region
	Inserted string
	// Deleted is the text the report says the region holds, "" when it
	// does not say: a file whose region holds other text is not the one
	// the fix was written for.
	Deleted string
	// Lines is the text the report says the change leaves from the start
	// of the region's first line (Semgrep's fixed_lines, joined), ""
	// when it does not say; the change must leave that text.
	Lines string
}

// Region is a part of a text file: by lines and columns when StartLine is
// above 0, else by Offset and Length from the file's start.
type Region struct {
	// StartLine and EndLine are 1-based (EndLine 0: StartLine);
	// StartColumn is 1-based (0: 1), EndColumn the column after the
	// region's last character (0: the end of EndLine, its line end
	// excluded), as SARIF defines them.
	StartLine, StartColumn, EndLine, EndColumn int
	Offset, Length                             int
	// Unit is what columns, offsets and lengths count.
	Unit Unit
	// MaybeWholeLines says Inserted may be the whole new text of lines
	// StartLine..EndLine rather than of the region (Semgrep's SARIF fixes
	// insert its fixed_lines where the JSON's `fix` replaces the match):
	// when Inserted starts with the text before the region on its first
	// line and ends with the text after it on its last, it replaces those
	// lines whole.
	MaybeWholeLines bool
}

// Unit is what a region's columns and offsets count.
type Unit int

const (
	// UnitUnknown: the report does not say (SARIF's default is UTF-16, but
	// staticcheck and Semgrep write bytes without saying so): a position
	// is only used where every unit gives the same, after ASCII text.
	UnitUnknown Unit = iota
	// UnitBytes counts UTF-8 bytes (Semgrep, staticcheck, SARIF byteOffset).
	UnitBytes
	// UnitUTF16 counts UTF-16 code units (SARIF columnKind utf16CodeUnits).
	UnitUTF16
	// UnitCodePoints counts Unicode code points (SARIF unicodeCodePoints).
	UnitCodePoints
)

// KeepFix is the fix a parser keeps: explanation and replacements, or the
// explanation alone when the replacements are past the bounds or carry
// text the report text rule would change (cleaning would alter the code
// the fix writes). nil when there is neither.
func KeepFix(explanation string, reps []Replacement) *Fix {
	if !appliable(reps) {
		reps = nil
	}
	if explanation == "" && len(reps) == 0 {
		return nil
	}
	return &Fix{Explanation: explanation, Replacements: reps}
}

func appliable(reps []Replacement) bool {
	if len(reps) > MaxFixReplacements {
		return false
	}
	size := 0
	for _, r := range reps {
		for _, s := range []string{r.Inserted, r.Deleted, r.Lines} {
			if cleantext.VisibleLines(s) != s {
				return false
			}
			size += len(s)
		}
	}
	return size <= MaxFixText
}
