// Package patchlines reads which lines a pull request adds to a file from
// the file's patch as the host gives it (GitHub's "List pull requests
// files": unified-diff hunks without file headers). An inline review
// comment may only sit on a line of the diff; the decoration comments only
// on lines the pull request adds.
package patchlines

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// MaxPatch bounds the patch text read (GitHub cuts patches far below).
const MaxPatch = 1 << 20

// maxLine bounds a line number: no file a host diffs has more lines.
const maxLine = 100_000_000

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// ErrMalformed is returned for a patch that is not hunks of a unified diff.
var ErrMalformed = errors.New("patchlines: not a unified-diff patch")

// Added returns the new file's line numbers that the patch adds (its '+'
// lines, on the right side of the diff). Context lines, removed lines and
// "\ No newline at end of file" markers are not added lines.
func Added(patch string) (map[int]bool, error) {
	if len(patch) > MaxPatch {
		return nil, ErrMalformed
	}
	added := map[int]bool{}
	if patch == "" { // a binary file, or one too large to diff
		return added, nil
	}
	next, inHunk := 0, false
	for l := range strings.SplitSeq(strings.TrimSuffix(patch, "\n"), "\n") {
		if strings.HasPrefix(l, "@@") {
			n, err := newStart(l)
			if err != nil {
				return nil, err
			}
			next, inHunk = n, true
			continue
		}
		if !inHunk {
			return nil, ErrMalformed
		}
		switch {
		case l == "" || l[0] == '\\' || l[0] == '-':
		case l[0] == '+':
			added[next] = true
			next++
		case l[0] == ' ':
			next++
		default:
			return nil, ErrMalformed
		}
		if next > maxLine {
			return nil, ErrMalformed
		}
	}
	return added, nil
}

// newStart reads a hunk header's first line of the new file.
func newStart(header string) (int, error) {
	m := hunkHeader.FindStringSubmatch(header)
	if m == nil {
		return 0, ErrMalformed
	}
	n, err := strconv.Atoi(m[3])
	if err != nil || n > maxLine {
		return 0, ErrMalformed
	}
	// "+0,0" is an empty new side (a deleted file): nothing is added.
	return max(n, 1), nil
}
