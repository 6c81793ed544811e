package norm

import (
	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/reportfinding"
)

// Text makes every text of a parsed report follow the edge's text rule
// (cleantext.Visible: control and bidi control characters written out as
// `<U+XXXX>`, invalid UTF-8 as U+FFFD, NFC), so that what the API answers,
// renders and exports never holds what it refuses from people. reports.Parse
// runs it on every report, whatever its format; the report's texts are
// those reportfinding.Report.MapText lists.
//
// Prose (titles, messages, snippets, justifications, advisory text) keeps
// its newlines and tabs (a carriage return becomes a newline); every other
// text is one line. Writing a character out lengthens the text: it is then
// cut back to the longer of its bound (MaxID for names, MaxText otherwise)
// and its length before, so a parser's bound still holds and an unbounded
// text does not grow. Paths are already clean (Path applies the rule after
// decoding) and are never cut: a shortened path names another file.
func Text(rep *reportfinding.Report) {
	rep.MapText(func(s string, k reportfinding.TextKind) string {
		switch k {
		case reportfinding.TextName:
			return within(cleantext.Visible(s), MaxID, len(s))
		case reportfinding.TextLine:
			return within(cleantext.Visible(s), MaxText, len(s))
		case reportfinding.TextProse:
			return within(cleantext.VisibleLines(s), MaxText, len(s))
		}
		return cleantext.Visible(s)
	})
}

// within cuts a cleaned text back to the longer of bound and was.
func within(s string, bound, was int) string { return ClipTo(s, max(bound, was)) }
