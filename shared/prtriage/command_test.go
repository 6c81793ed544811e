package prtriage_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/prtriage"
)

const ref = "3fa2c91b"

func TestParseCommands(t *testing.T) {
	cases := []struct {
		body string
		want prtriage.Command
	}{
		{"/codescan ignore 3fa2c91b test fixture only", prtriage.Command{Verb: "ignore", Ref: ref, Reason: "test fixture only"}},
		{"  \r\n/codescan   IGNORE\t3FA2C91B   spaced   out  \r\nsecond line is conversation",
			prtriage.Command{Verb: "ignore", Ref: ref, Reason: "spaced   out"}},
		{"/codescan accept-risk 3fa2c91b 30 behind the VPN until Q3", prtriage.Command{Verb: "accept-risk", Ref: ref, Days: 30, Reason: "behind the VPN until Q3"}},
		{"/codescan accept-risk 3fa2c91b-77aa 365 a year", prtriage.Command{Verb: "accept-risk", Ref: "3fa2c91b-77aa", Days: 365, Reason: "a year"}},
		{"/codescan ignore 3fa2c91b motif: café ✓", prtriage.Command{Verb: "ignore", Ref: ref, Reason: "motif: café ✓"}},
	}
	for _, c := range cases {
		got, ok, err := prtriage.Parse(c.body)
		if !ok || err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v %v %v, want %+v", c.body, got, ok, err, c.want)
		}
	}
	if got := (prtriage.Command{Verb: "accept-risk"}).Status(); got != "accepted_risk" {
		t.Errorf("accept-risk sets %s", got)
	}
	if got := (prtriage.Command{Verb: "ignore"}).Status(); got != "false_positive" {
		t.Errorf("ignore sets %s", got)
	}
}

// Conversation is not a command: nothing is answered.
func TestParseLeavesConversationAlone(t *testing.T) {
	for _, body := range []string{"", "LGTM", "/codescanner ignore 3fa2c91b x", "please run /codescan ignore 3fa2c91b x",
		"> /codescan ignore 3fa2c91b quoted", "/CODESCAN ignore 3fa2c91b shouting", "<!-- codescan:reply -->\nCodescan did not act"} {
		if c, ok, err := prtriage.Parse(body); ok || err != nil {
			t.Errorf("Parse(%q) = %+v %v %v, want no command", body, c, ok, err)
		}
	}
}

// A command that cannot be read is answered with why, never echoing
// what the author wrote.
func TestParseRefusesBadCommands(t *testing.T) {
	cases := map[string]string{
		"/codescan":                                  "No command given",
		"/codescan unignore 3fa2c91b x":              "Unknown command",
		"/codescan @everyone 3fa2c91b x":             "Unknown command",
		"/codescan ignore":                           "reference",
		"/codescan ignore 3fa2c9 x":                  "reference",
		"/codescan ignore 3fa2c91g x":                "reference",
		"/codescan ignore 3fa2c91b":                  "reason is required",
		"/codescan ignore 3fa2c91b    ":              "reason is required",
		"/codescan accept-risk 3fa2c91b x reason":    "days",
		"/codescan accept-risk 3fa2c91b 0 reason":    "days",
		"/codescan accept-risk 3fa2c91b 366 reason":  "days",
		"/codescan accept-risk 3fa2c91b 0030 reason": "days",
		"/codescan accept-risk 3fa2c91b -5 reason":   "days",
		"/codescan accept-risk 3fa2c91b 30":          "reason is required",
		"/codescan ignore 3fa2c91b " + strings.Repeat("r", prtriage.MaxReasonBytes+1): "at most",
		"/codescan ignore 3fa2c91b rtl \u202eevil":                                    "cannot be stored",
		"/codescan ignore 3fa2c91b bell \a":                                           "cannot be stored",
	}
	for body, want := range cases {
		_, ok, err := prtriage.Parse(body)
		var pe *prtriage.ParseError
		if !ok || !errors.As(err, &pe) || !strings.Contains(pe.Problem, want) {
			t.Errorf("Parse(%q) = %v %v, want a refusal saying %q", body, ok, err, want)
			continue
		}
		reply := prtriage.UsageReply(err)
		if !strings.HasPrefix(reply, prtriage.ReplyMarker+"\n") || !strings.Contains(reply, "Usage:") || strings.Contains(reply, "@everyone") {
			t.Errorf("reply to %q: %s", body, reply)
		}
	}
}

func TestCanonicalLogin(t *testing.T) {
	for in, want := range map[string]string{"Octo-Dev": "octo-dev", " mona ": "mona", "jdoe_acme": "jdoe_acme", "a": "a",
		"Jane.Doe": "jane.doe", "j.d-x_y": "j.d-x_y"} {
		if got, ok := prtriage.CanonicalLogin(in); !ok || got != want {
			t.Errorf("CanonicalLogin(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "-dash", "with space", "ends.", ".lead", "repo.git", "feed.atom", "x`y", strings.Repeat("l", 65), "ünï", "a/b", "SCMLOGIN#x"} {
		if got, ok := prtriage.CanonicalLogin(in); ok {
			t.Errorf("CanonicalLogin(%q) = %q, want refused", in, got)
		}
	}
}

func TestRef(t *testing.T) {
	if got := prtriage.Ref("3fa2c91b-77aa-5c1e-9b0d-0e1f2a3b4c5d"); got != ref {
		t.Errorf("Ref = %q", got)
	}
	if got := prtriage.Ref("i1"); got != "i1" {
		t.Errorf("Ref of a short id = %q", got)
	}
}
