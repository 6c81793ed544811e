package prtriage

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Prefix starts every command: the first line of a comment that starts
// with it (and a space, or nothing more) is a command; any other comment
// is conversation and is left alone.
const Prefix = "/codescan"

// The verbs of a command.
const (
	VerbIgnore     = "ignore"
	VerbAcceptRisk = "accept-risk"
)

// Bounds of a command's values.
const (
	// RefLength is how many leading characters of an issue id the summary
	// shows as a finding's reference, and the fewest a command may give.
	RefLength = 8
	// MaxDays bounds an accepted risk's period (the API's bound).
	MaxDays = schema.MaxAcceptanceDays
	// MaxReasonBytes bounds the reason, leaving room in the stored reason
	// (2,000 bytes) for where the command came from.
	MaxReasonBytes = 1000
)

// Usage is the grammar, as replies show it.
var Usage = "`/codescan ignore <ref> <reason>` or `/codescan accept-risk <ref> <days> <reason>` " +
	fmt.Sprintf("(`<ref>` is the finding's Ref in the summary table, `<days>` 1 to %d)", MaxDays)

// Ref is the reference a summary shows for an issue: the start of its id
// (a uuid, so hex digits).
func Ref(issueID string) string { return issueID[:min(len(issueID), RefLength)] }

// Command is one parsed command.
type Command struct {
	Verb   string // VerbIgnore or VerbAcceptRisk
	Ref    string // lower case: a prefix of an issue id
	Days   int    // VerbAcceptRisk: how long the risk is accepted
	Reason string // one line, as written
}

// Status is the issue status the command sets.
func (c Command) Status() string {
	if c.Verb == VerbAcceptRisk {
		return "accepted_risk"
	}
	return "false_positive"
}

// ParseError says why a command cannot be read; its message is written
// for the comment's author.
type ParseError struct{ Problem string }

func (e *ParseError) Error() string { return e.Problem }

func refuse(format string, args ...any) error {
	return &ParseError{Problem: fmt.Sprintf(format, args...)}
}

var refPattern = regexp.MustCompile(`^[0-9a-f-]{8,36}$`)

// Parse reads the command a comment starts with. ok is false when the
// comment is no command; err (a *ParseError) when it is one that cannot be
// read. Only the first line counts: reviewers may explain below it.
func Parse(body string) (c Command, ok bool, err error) {
	line, _, _ := strings.Cut(strings.TrimLeft(body, " \t\r\n"), "\n")
	line = strings.TrimSpace(line)
	rest, found := strings.CutPrefix(line, Prefix)
	if !found || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return Command{}, false, nil
	}
	verb, rest := word(rest)
	switch c.Verb = strings.ToLower(verb); c.Verb {
	case VerbIgnore, VerbAcceptRisk:
	case "":
		return Command{}, true, refuse("No command given.")
	default:
		// The word is not echoed: a reply must not carry a stranger's
		// mentions or markup.
		return Command{}, true, refuse("Unknown command: the commands are `ignore` and `accept-risk`.")
	}
	var ref string
	ref, rest = word(rest)
	if c.Ref = strings.ToLower(ref); !refPattern.MatchString(c.Ref) {
		return Command{}, true, refuse("The reference must be at least the %d characters of a finding's Ref.", RefLength)
	}
	if c.Verb == VerbAcceptRisk {
		var days string
		days, rest = word(rest)
		n, err := strconv.Atoi(days)
		if err != nil || len(days) > 3 || n < 1 || n > MaxDays {
			return Command{}, true, refuse("The number of days must be a whole number from 1 to %d.", MaxDays)
		}
		c.Days = n
	}
	if c.Reason, err = reason(rest); err != nil {
		return Command{}, true, err
	}
	return c, true, nil
}

// word splits the first space-separated word off s.
func word(s string) (string, string) {
	s = strings.TrimLeft(s, " \t")
	w, rest, _ := strings.Cut(strings.ReplaceAll(s, "\t", " "), " ")
	return w, rest
}

// reason checks the reason: given, bounded, and text people can read (no
// control or bidi characters: it is shown in the issue's history).
func reason(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", refuse("A reason is required.")
	case len(s) > MaxReasonBytes:
		return "", refuse("The reason may hold at most %d bytes.", MaxReasonBytes)
	}
	v, err := cleantext.Line("reason", s) // NFC, as the edge gives PATCH /issue's reason
	if err != nil {
		return "", refuse("The reason holds characters that cannot be stored (control or bidirectional-override characters).")
	}
	return v, nil
}

var loginPattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9_-])?$`)

// CanonicalLogin is a host login in the form users are linked by: lower
// case (GitHub and GitLab logins ignore case), letters, digits, hyphens,
// underscores (GitHub Enterprise managed users, GitLab) and dots (GitLab),
// at most 64 characters, starting with a letter or digit, not ending with a
// dot, and not ending in .git or .atom (GitLab refuses those); false for
// anything else.
func CanonicalLogin(s string) (string, bool) {
	l := strings.ToLower(strings.TrimSpace(s))
	ok := loginPattern.MatchString(l) && !strings.HasSuffix(l, ".git") && !strings.HasSuffix(l, ".atom")
	return l, ok
}
