package githost

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A pull request's review comments are anchored to lines of its diff:
// GitHub refuses a comment on a line that is not in one of the file's hunks
// and answers with the hunk text up to the commented line (diff_hunk). This
// file models that from the seeded patches.

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@`)

// diffLine is one line of a hunk with its numbers in the old and new file
// (0 where the line does not exist on that side).
type diffLine struct {
	kind     byte // ' ', '+' or '-'
	old, new int
	at       int // index of the line in hunk.text
}

type hunk struct {
	text  []string // header first, then the lines as in the patch
	lines []diffLine
}

// parsePatch splits a unified-diff patch (as GitHub returns it: hunks only,
// no file headers) into hunks.
func parsePatch(patch string) ([]hunk, error) {
	var hunks []hunk
	var old, new int
	for i, l := range strings.Split(strings.TrimSuffix(patch, "\n"), "\n") {
		if m := hunkHeader.FindStringSubmatch(l); m != nil {
			old, _ = strconv.Atoi(m[1])
			new, _ = strconv.Atoi(m[2])
			hunks = append(hunks, hunk{text: []string{l}})
			continue
		}
		if len(hunks) == 0 {
			return nil, fmt.Errorf("patch line %d: %q before the first hunk header", i+1, l)
		}
		h := &hunks[len(hunks)-1]
		h.text = append(h.text, l)
		if d, ok := numberLine(l, &old, &new); ok {
			d.at = len(h.text) - 1
			h.lines = append(h.lines, d)
		}
	}
	return hunks, nil
}

// numberLine numbers one patch line and advances the counters; "\ No newline
// at end of file" and empty trailing lines are not diff lines.
func numberLine(l string, old, new *int) (diffLine, bool) {
	if l == "" || l[0] == '\\' {
		return diffLine{}, false
	}
	switch l[0] {
	case '+':
		*new++
		return diffLine{kind: '+', new: *new - 1}, true
	case '-':
		*old++
		return diffLine{kind: '-', old: *old - 1}, true
	default:
		*old++
		*new++
		return diffLine{kind: ' ', old: *old - 1, new: *new - 1}, true
	}
}

// countChanges counts added and deleted lines, as diff-entry reports them.
func countChanges(patch string) (additions, deletions int) {
	hunks, err := parsePatch(patch)
	if err != nil {
		return 0, 0
	}
	for _, h := range hunks {
		for _, d := range h.lines {
			switch d.kind {
			case '+':
				additions++
			case '-':
				deletions++
			}
		}
	}
	return additions, deletions
}

// locate finds line on side (RIGHT: the new file, added or context lines;
// LEFT: the old file, deleted or context lines) and returns GitHub's
// diff_hunk for it: the hunk header and the lines up to it.
func locate(hunks []hunk, line int, side string) (diffHunk string, ok bool) {
	for _, h := range hunks {
		for _, d := range h.lines {
			if matches(d, line, side) {
				return strings.Join(h.text[:d.at+1], "\n"), true
			}
		}
	}
	return "", false
}

func matches(d diffLine, line int, side string) bool {
	if side == "LEFT" {
		return d.kind != '+' && d.old == line
	}
	return d.kind != '-' && d.new == line
}

// atPosition resolves the deprecated "position": the count of lines below
// the first hunk header, later headers included.
func atPosition(hunks []hunk, position int) (line int, side string, ok bool) {
	n := 0
	for hi, h := range hunks {
		if hi > 0 {
			n++ // a later hunk's header takes a position too
		}
		for _, d := range h.lines {
			n++
			if n == position {
				if d.kind == '-' {
					return d.old, "LEFT", true
				}
				return d.new, "RIGHT", true
			}
		}
	}
	return 0, "", false
}
