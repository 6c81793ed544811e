// Package sourcecode cuts what issues show of the source files a client
// uploads with its report (POST /code-upload): the flagged lines, whose
// content is the finding's identity when the report has none of its own,
// and an excerpt around them for the details.
package sourcecode

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Bounds of what is kept of a file on an issue (issue items are read on
// every list, so their size is their cost).
const (
	// MaxFileBytes bounds an uploaded file: a larger one is generated or
	// minified code, whose excerpts say nothing.
	MaxFileBytes = 1 << 20
	// ContextLines are shown before and after the flagged lines.
	ContextLines = 3
	// MaxFlaggedLines of a region are kept; a finding spanning a whole
	// function is identified by its first lines.
	MaxFlaggedLines = 5
	// MaxLineBytes of a line are kept (minified code has lines of
	// megabytes).
	MaxLineBytes = 200
)

// Excerpt is the source of a finding's region.
type Excerpt struct {
	// Flagged is the text of the flagged lines (line to end line, at most
	// MaxFlaggedLines), "" when the file has no such line.
	Flagged string
	// Start is the 1-based number of Code's first line; Code is the
	// flagged lines with ContextLines around them.
	Start int
	Code  string
}

// Cut returns the excerpt of lines line..endLine (1-based; endLine below
// line means line alone) of a file's content, and false when the file has
// no line there. Invalid UTF-8 becomes U+FFFD; line ends (LF, CRLF, CR) are
// written as LF.
func Cut(content []byte, line, endLine int) (Excerpt, bool) {
	if line < 1 {
		return Excerpt{}, false
	}
	endLine = min(max(endLine, line), line+MaxFlaggedLines-1)
	from, to := max(line-ContextLines, 1), endLine+ContextLines
	var lines []string
	n := 0
	for rest := content; len(rest) > 0 && n < to; {
		var l []byte
		l, rest = nextLine(rest)
		n++
		if n >= from {
			lines = append(lines, clip(l))
		}
	}
	if n < line {
		return Excerpt{}, false
	}
	flagged := lines[line-from : min(endLine-from+1, len(lines))]
	return Excerpt{Flagged: strings.Join(flagged, "\n"), Start: from, Code: strings.Join(lines, "\n")}, true
}

// nextLine splits off the first line of b (without its end).
func nextLine(b []byte) (line, rest []byte) {
	i := bytes.IndexAny(b, "\r\n")
	if i < 0 {
		return b, nil
	}
	line, rest = b[:i], b[i+1:]
	if b[i] == '\r' && len(rest) > 0 && rest[0] == '\n' {
		rest = rest[1:]
	}
	return line, rest
}

// clip is a line as valid UTF-8 of at most MaxLineBytes, cut at a rune
// boundary.
func clip(l []byte) string {
	s := strings.ToValidUTF8(string(l), "\uFFFD")
	if len(s) <= MaxLineBytes {
		return s
	}
	cut := MaxLineBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// IsText tells whether content looks like source text: no NUL byte
// anywhere. Git looks at the first 8 KiB only; a file is at most
// MaxFileBytes here, and a NUL past 8 KiB would otherwise reach excerpts.
func IsText(content []byte) bool {
	return bytes.IndexByte(content, 0) < 0
}
