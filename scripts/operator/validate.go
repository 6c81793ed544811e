package main

// Every value on the command line is checked here, with the API's own
// rules, before the operator opens its connection: the operator writes
// the same companies, users and keys the API does (and shows them back
// through it: /verify names the company), so what the API would refuse
// must not come in through the side door, and a refusal is a usage error
// (exit 2) that costs no round trip to DynamoDB.

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/acme/codescan-api/functions/accounts"
	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// maxCompanyNameLength bounds a company name, in characters. No API route
// names a company, so the operator is its only writer and owns the bound:
// the one every other name people read has in the API (users, API keys,
// teams, integrations).
const maxCompanyNameLength = 100

// maxConnectionValueBytes bounds --region, --stack, --table and
// --endpoint: DynamoDB's longest TableName (a table ARN) is 1,024 bytes,
// and no region, stack or endpoint is longer.
const maxConnectionValueBytes = 1024

// newCompany checks create-company's flags as the API checks a new user
// (the admin) and a name people read (the company).
func newCompany(name, email, fullName string) (tenancy.NewCompany, error) {
	var in tenancy.NewCompany
	var err error
	if in.Name, err = cleantext.Name("--name", name, maxCompanyNameLength); err != nil {
		return in, err
	}
	if in.Admin.Email, err = cleantext.Email("--admin-email", email, accounts.MaxEmailLength); err != nil {
		return in, err
	}
	in.Admin.FirstName, in.Admin.LastName, err = personName(fullName)
	return in, err
}

// personName splits "FIRST LAST" at its first space into the first_name
// and last_name POST /users requires, each held to the API's rule. The
// whole is checked first, for its characters only (the bounds are the
// parts'), so that a control or bidi character anywhere is refused naming
// the flag the operator typed.
func personName(full string) (first, last string, err error) {
	if full, err = cleantext.Name("--admin-name", full, math.MaxInt); err != nil {
		return "", "", err
	}
	first, last, ok := strings.Cut(full, " ")
	if !ok {
		return "", "", errors.New(`--admin-name must hold a first and a last name ("FIRST LAST"): a user of the API has both`)
	}
	if first, err = cleantext.Name("--admin-name's first name", first, accounts.MaxNameLength); err != nil {
		return "", "", err
	}
	if last, err = cleantext.Name("--admin-name's last name", last, accounts.MaxNameLength); err != nil {
		return "", "", err
	}
	return first, last, nil
}

// keyLife reads --expires-in-days: "0" for a key that never expires (the
// API's absent expires_in_days), else a whole number of days from 1 to
// the API's bound, written as the API reads ids (httpapi.ParseID: digits
// only, no leading zero), where the flag package would take "0x10" or
// "+7" as well.
func keyLife(raw string) (int, error) {
	if raw == "0" {
		return 0, nil
	}
	days, err := httpapi.ParseID("--expires-in-days", raw)
	if err != nil || days > accounts.MaxKeyLifeDays {
		return 0, fmt.Errorf("--expires-in-days must be 0 (never) or a whole number of days from 1 to %d", accounts.MaxKeyLifeDays)
	}
	return int(days), nil
}

// connectionValue checks a connection flag's value: no rule of the API
// applies, but it is still printed back in errors and sent to AWS.
func connectionValue(flag, v string) error {
	if _, err := cleantext.Line(flag, v); err != nil {
		return err
	}
	if len(v) > maxConnectionValueBytes {
		return fmt.Errorf("%s must be at most %d bytes", flag, maxConnectionValueBytes)
	}
	return nil
}

// apiMessage is an httpapi error's message without its status: the
// operator speaks in exit statuses.
func apiMessage(err error) error {
	var e *httpapi.Error
	if errors.As(err, &e) {
		return errors.New(e.Message)
	}
	return err
}

// maxShown is how many characters of an argument a message quotes: enough
// to recognise it, never a whole oversized input.
const maxShown = 32

// maxUsageLine bounds a usage error's line, whatever the flag package put
// in it (it names an unknown flag whole and unescaped).
const maxUsageLine = 300

// quoted matches a Go-quoted string (%q), as the flag package and this
// command quote arguments in their messages.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// printable makes a message that may hold command-line text safe to print
// on one line of a terminal: every quoted argument cut to its first
// maxShown characters, and every control, bidi or invalid byte left
// outside quotes escaped, so none acts on the terminal.
func printable(msg string) string {
	msg = quoted.ReplaceAllStringFunc(msg, func(q string) string {
		s, err := strconv.Unquote(q)
		if err != nil {
			return q
		}
		return shown(s)
	})
	return escapeUnprintable(msg)
}

// shown quotes the start of an argument: at most maxShown characters,
// with its length when cut.
func shown(s string) string {
	n := 0
	for i := range s {
		if n == maxShown {
			return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:i]), len(s))
		}
		n++
	}
	return strconv.Quote(s)
}

// escapeUnprintable writes each rune strconv would not print as itself
// (controls, bidi and other format characters, invalid bytes) as its Go
// escape.
func escapeUnprintable(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == ' ' || strconv.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// clip cuts a line to max bytes, at a character boundary.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
