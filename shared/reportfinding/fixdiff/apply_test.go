package fixdiff

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$`)

// patch applies a unified diff to original as `patch -p1` does without
// fuzz (see patchText), failing the test when it does not apply.
func patch(t *testing.T, diff, original string) string {
	t.Helper()
	out, err := patchText(diff, original)
	if err != nil {
		t.Fatalf("%v in\n%s", err, diff)
	}
	return out
}

// patchText applies a unified diff: every hunk at its line, its context
// and removed lines exactly as in the file, its counts right; a hunk that
// does not reach the file's start or end must carry ContextLines of
// context on each side (GNU patch anchors a hunk with fewer at the file's
// start or end).
func patchText(diff, original string) (string, error) {
	lines := strings.SplitAfter(diff, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "--- a/") || !strings.HasPrefix(lines[1], "+++ b/") {
		return "", fmt.Errorf("diff headers")
	}
	old := strings.SplitAfter(original, "\n")
	if old[len(old)-1] == "" {
		old = old[:len(old)-1]
	}
	var out []string
	at := 0 // next line of old to copy
	for n := 2; n < len(lines) && lines[n] != ""; {
		m := hunkHeader.FindStringSubmatch(strings.TrimSuffix(lines[n], "\n"))
		if m == nil {
			return "", fmt.Errorf("hunk header %q", lines[n])
		}
		from, fromCount, toCount := atoi(m[1]), countOf(m[2]), countOf(m[4])
		if fromCount > 0 {
			from-- // 0-based
		}
		if from < at || from > len(old) {
			return "", fmt.Errorf("hunk %q out of order or past the file", m[0])
		}
		out = append(out, old[at:from]...)
		var body []string
		for n++; n < len(lines) && lines[n] != "" && !strings.HasPrefix(lines[n], "@@"); n++ {
			body = append(body, lines[n])
		}
		h := hunk{old: old, at: from, out: out}
		if err := h.apply(body); err != nil {
			return "", err
		}
		if h.from != fromCount || h.to != toCount {
			return "", fmt.Errorf("hunk %q counts %d,%d", m[0], h.from, h.to)
		}
		if err := checkContext(body, from, h.at, len(old)); err != nil {
			return "", err
		}
		at, out = h.at, h.out
	}
	return strings.Join(append(out, old[at:]...), ""), nil
}

// hunk is one hunk being applied at line at of old.
type hunk struct {
	old      []string
	at       int
	out      []string
	from, to int
}

func (h *hunk) apply(body []string) error {
	for i := 0; i < len(body); i++ {
		l := body[i]
		text := l[1:]
		if i+1 < len(body) && body[i+1] == "\\ No newline at end of file\n" {
			text = strings.TrimSuffix(text, "\n")
			i++
		}
		switch l[0] {
		case ' ', '-':
			if h.at >= len(h.old) || h.old[h.at] != text {
				return fmt.Errorf("line %d is %q, the diff says %q", h.at+1, lineAt(h.old, h.at), text)
			}
			h.at++
			h.from++
			if l[0] == ' ' {
				h.out = append(h.out, text)
				h.to++
			}
		case '+':
			h.out = append(h.out, text)
			h.to++
		default:
			return fmt.Errorf("hunk line %q", l)
		}
	}
	return nil
}

// checkContext checks that a hunk has its full context on each side that
// does not reach the file's edge.
func checkContext(body []string, from, to, lines int) error {
	lead, trail := 0, 0
	for lead < len(body) && body[lead][0] == ' ' {
		lead++
	}
	for i := len(body) - 1; i >= 0 && (body[i][0] == ' ' || body[i][0] == '\\'); i-- {
		if body[i][0] == ' ' {
			trail++
		}
	}
	if (from > 0 && lead < ContextLines) || (to < lines && trail < ContextLines) {
		return fmt.Errorf("hunk at line %d has %d lines of context before and %d after", from+1, lead, trail)
	}
	return nil
}

func lineAt(lines []string, n int) string {
	if n < len(lines) {
		return lines[n]
	}
	return "(end of file)"
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(fmt.Sprint("not a number: ", s))
	}
	return n
}

func countOf(s string) int {
	if s == "" {
		return 1
	}
	return atoi(s)
}

// The test applier refuses what patch refuses.
func TestPatchHelperRefuses(t *testing.T) {
	const original = "a\nb\nc\nd\ne\nf\ng\nh\n"
	good := "--- a/x\n+++ b/x\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
	if got := patch(t, good, original); got != "a\nb\nc\nd\nE\nf\ng\nh\n" {
		t.Fatalf("patched: %q", got)
	}
	for name, diff := range map[string]string{
		"wrong context": "--- a/x\n+++ b/x\n@@ -2,7 +2,7 @@\n b\n X\n d\n-e\n+E\n f\n g\n h\n",
		"short context": "--- a/x\n+++ b/x\n@@ -3,5 +3,5 @@\n c\n d\n-e\n+E\n f\n g\n",
		"wrong count":   "--- a/x\n+++ b/x\n@@ -2,6 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n",
		"wrong line":    "--- a/x\n+++ b/x\n@@ -1,7 +1,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n",
	} {
		if got, err := patchText(diff, original); err == nil {
			t.Errorf("%s: applied, %q", name, got)
		}
	}
}
