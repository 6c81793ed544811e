package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acme/codescan-api/functions/accounts"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/cleantext"
)

// long is the 3,000-byte input of the issue: printable, so only its size
// is wrong, and repetitive, so any echo of a part of it is easy to find.
var long = strings.Repeat("Acme ", 600)

// awsSpy stands in for DynamoDB (and, with --region, for every AWS
// service): it counts the requests it gets and answers each with a
// ValidationException, which the SDK does not retry, so a command that
// does reach it fails at once (exit 1).
func awsSpy(t *testing.T) (endpoint string, calls *atomic.Int64) {
	calls = new(atomic.Int64)
	const body = `{"__type":"com.amazon.coral.validate#ValidationException","message":"the spy answers no request"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		// The DynamoDB client checks the body against this, as DynamoDB sends it.
		w.Header().Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE([]byte(body))))
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, calls
}

// spyConnections are the two ways to name a table, both pointed at the
// spy: --local through --endpoint, --region through the SDK's own endpoint
// and credential variables (so no AWS account is asked).
func spyConnections(t *testing.T, endpoint string) map[string][]string {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "AKIDSPY", "AWS_SECRET_ACCESS_KEY": "spy", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
	return map[string][]string{
		"local":  {"--local", "--endpoint", endpoint, "--table", "spy"},
		"region": {"--region", "eu-central-1", "--table", "spy"},
	}
}

// Input the API would refuse is a usage error (exit 2) before any request
// to AWS, the connection's opening included, with a one-line message
// naming the flag that neither echoes an oversized value nor prints a
// control or bidi character raw.
func TestRefusedBeforeDynamoDB(t *testing.T) {
	admin := []string{"--admin-email", "ada@acme.test", "--admin-name", "Ada Lovelace"}
	company := func(name string) []string {
		return append([]string{"create-company", "--name", name}, admin...)
	}
	withAdmin := func(email, name string) []string {
		return []string{"create-company", "--name", "Acme", "--admin-email", email, "--admin-name", name}
	}
	mint := func(flags ...string) []string {
		return append([]string{"mint-key", "--company", "1", "--user", "2"}, flags...)
	}
	cases := []struct {
		name string
		args []string
		want string // in the message line
	}{
		{"ESC in a company name", company("Acme\x1b[2J\x1b[H"), "create-company: --name must not contain control characters (U+001B)"},
		{"RLO in a company name", company("Acme\u202egnp.exe"), "--name must not contain bidirectional control characters (U+202E)"},
		{"isolate in a company name", company("\u2066Acme\u2069"), "--name must not contain bidirectional control characters (U+2066)"},
		{"C1 control ending a company name", company("Acme\u0085"), "--name must not contain control characters (U+0085)"},
		{"blank company name", company("   "), "--name is required"},
		{"3,000-byte company name", company(long), "--name must be at most 100 characters"},
		{"not an email", withAdmin("not-an-email", "Ada Lovelace"), "--admin-email must be a plain email address of at most 254 characters"},
		{"email with a display name", withAdmin("Ada <ada@acme.test>", "Ada Lovelace"), "--admin-email must be a plain email address"},
		{"email with RLO", withAdmin("ada\u202e@acme.test", "Ada Lovelace"), "--admin-email must not contain bidirectional control characters (U+202E)"},
		{"3,000-byte email", withAdmin(strings.Repeat("a", 2990)+"@acme.test", "Ada Lovelace"), "--admin-email must be a plain email address of at most 254 characters"},
		{"no admin email", []string{"create-company", "--name", "Acme", "--admin-name", "Ada Lovelace"}, "--admin-email is required"},
		{"one-word admin name", withAdmin("ada@acme.test", "Ada"), "--admin-name must hold a first and a last name"},
		{"ESC in an admin name", withAdmin("ada@acme.test", "Ada \x1b]0;pwned\x07"), "--admin-name must not contain control characters (U+001B)"},
		{"3,000-byte admin name", withAdmin("ada@acme.test", long), "--admin-name's last name must be at most 100 characters"},
		{"signed id", []string{"deactivate-company", "--company", "+3"}, "--company must be a positive integer id"},
		{"id with a leading zero", []string{"list-users", "--company", "03"}, "--company must be a positive integer id"},
		{"3,000-digit id", []string{"list-keys", "--company", "1", "--user", strings.Repeat("9", 3000)}, "--user must be a positive integer id"},
		{"zero key id", []string{"revoke-key", "--company", "1", "--key", "0"}, "--key must be a positive integer id"},
		{"RLO in a key name", mint("--name", "ci\u202eyek"), "mint-key: --name must not contain bidirectional control characters (U+202E)"},
		{"3,000-byte key name", mint("--name", long), "--name must be at most 100 characters"},
		{"key life past the API's bound", mint("--expires-in-days", "3651"), "--expires-in-days must be 0 (never) or a whole number of days from 1 to 3650"},
		{"key life in hex", mint("--expires-in-days", "0x10"), "--expires-in-days must be 0 (never)"},
		{"ESC in an unknown flag", []string{"create-company", "--\x1b[31mname", "x"}, `flag provided but not defined: -\x1b[31mname`},
		{"3,000-byte command", []string{long}, `unknown command "Acme Acme Acme Acme Acme Acme Ac"… (3000 bytes)`},
		{"RLO in an argument", []string{"list-companies", "\u202eevil"}, `list-companies: unexpected "\u202eevil"`},
		{"3,000-byte boolean", []string{"create-company", "--new-key=" + long}, `invalid boolean value "Acme Acme Acme Acme Acme Acme Ac"… (3000 bytes) for -new-key`},
		{"3,000-byte table", []string{"--table", long, "list-companies"}, "--table must be at most 1024 bytes"},
		{"ESC in a stack", []string{"--stack", "codescan\x1b[8m", "list-companies"}, "--stack must not contain control characters (U+001B)"},
	}
	endpoint, calls := awsSpy(t)
	for mode, conn := range spyConnections(t, endpoint) {
		t.Run(mode, func(t *testing.T) {
			// The spy sees what does reach AWS: a valid command line is
			// exit 1 after at least one request.
			before := calls.Load()
			if status, stderr := runCaptured(t, append(slices.Clone(conn), "list-companies")...); status != exitFailed || calls.Load() == before {
				t.Fatalf("a valid command: exit %d after %d requests to the spy: %s", status, calls.Load()-before, stderr)
			}
			for _, c := range cases {
				before := calls.Load()
				status, stderr := runCaptured(t, append(slices.Clone(conn), c.args...)...)
				line, _, _ := strings.Cut(stderr, "\n")
				switch {
				case status != exitUsage:
					t.Errorf("%s: exit %d, want %d: %s", c.name, status, exitUsage, line)
				case calls.Load() != before:
					t.Errorf("%s: %d requests reached AWS before the refusal", c.name, calls.Load()-before)
				case !strings.Contains(line, c.want):
					t.Errorf("%s: message %q, want it to hold %q", c.name, line, c.want)
				}
				assertSafeMessage(t, c.name, stderr, line)
			}
		})
	}
}

// assertSafeMessage: every line of standard error is text a terminal shows
// as is (what cleantext lets through), the message fits one short line,
// and no part of the 3,000-byte input longer than a quoted prefix is in it.
func assertSafeMessage(t *testing.T, name, stderr, line string) {
	t.Helper()
	if _, err := cleantext.Lines("stderr", stderr); err != nil {
		t.Errorf("%s: standard error holds a raw character: %v: %q", name, err, line)
	}
	if max := len("operator: ") + maxUsageLine + len("…"); len(line) > max {
		t.Errorf("%s: message of %d bytes, over %d", name, len(line), max)
	}
	for _, echo := range []string{strings.Repeat("Acme ", 8), strings.Repeat("a", 64), strings.Repeat("9", 64)} {
		if strings.Contains(stderr, echo) {
			t.Errorf("%s: standard error echoes the oversized input: %q", name, line)
		}
	}
}

func runCaptured(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	status := runMain(context.Background(), args, &stdout, &stderr)
	return status, stderr.String()
}

// Valid input still creates the company, its admin and keys, held as the
// API holds text: trimmed and NFC-normalized, so the company's name in
// another spelling (or case) is the same company.
func TestValidInputIsNormalized(t *testing.T) {
	env := testenv.New(t)
	local := []string{"--local", "--endpoint", testenv.Endpoint(), "--table", env.Store.TableName()}
	run := func(out any, args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if status := runMain(context.Background(), append(slices.Clone(local), args...), &stdout, &stderr); status != exitOK {
			t.Fatalf("%q: exit %d: %s", args, status, stderr.String())
		}
		if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
			t.Fatalf("%q: %s: %v", args, stdout.String(), err)
		}
	}
	var c created
	run(&c, "create-company", "--name", "  Cafe\u0301 Ole\u0301 ", "--admin-email", " jose@cafe.test ", "--admin-name", " Jose\u0301  A\u0301lvarez ")
	if !c.Created || c.Company.Name != "Caf\u00e9 Ol\u00e9" || c.Admin.Email != "jose@cafe.test" {
		t.Fatalf("create-company: %+v", c)
	}
	var again created
	run(&again, "create-company", "--name", "CAF\u00c9 OL\u00c9", "--admin-email", "jose@cafe.test", "--admin-name", "Jos\u00e9 \u00c1lvarez")
	if again.Created || again.Company.ID != c.Company.ID {
		t.Fatalf("the same name in another spelling made another company: %+v", again)
	}
	var users []userJSON
	run(&users, "list-users", "--company", fmt.Sprint(c.Company.ID))
	if len(users) != 1 || users[0].FirstName != "Jos\u00e9" || users[0].LastName != "\u00c1lvarez" {
		t.Fatalf("list-users: %+v", users)
	}
	var minted struct {
		Key keyJSON `json:"key"`
	}
	run(&minted, "mint-key", "--company", fmt.Sprint(c.Company.ID), "--user", fmt.Sprint(c.Admin.ID), "--name", " de\u0301ploiement ", "--expires-in-days", "3650")
	if minted.Key.Name != "d\u00e9ploiement" || minted.Key.ExpiresAt == "" {
		t.Fatalf("mint-key: %+v", minted)
	}
}

// printable cuts every quoted argument in a message and escapes what is
// left raw; shown says how long a cut argument was.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		`unknown command "short"`:                      `unknown command "short"`,
		`unknown command "` + long + `"`:               `unknown command "Acme Acme Acme Acme Acme Acme Ac"… (3000 bytes)`,
		"flag provided but not defined: -\x1b[2J":      `flag provided but not defined: -\x1b[2J`,
		"raw \u202eRLO, \xff byte, \u0085 NEL, \t tab": `raw \u202eRLO, \xff byte, \u0085 NEL, \t tab`,
		"kept: é, 日本, \uFFFD":                          "kept: é, 日本, \uFFFD",
		`bad quote "\q" stays`:                         `bad quote "\q" stays`,
		`unexpected "` + strings.Repeat("é", 40) + `"`: `unexpected "` + strings.Repeat("é", 32) + `"… (80 bytes)`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
	if got := clip("ab"+strings.Repeat("é", 10), 5); got != "abé…" {
		t.Errorf("clip cut inside a character: %q", got)
	}
}

// The usage states the bounds the checks apply; this keeps them in step.
func TestUsageStatesTheBounds(t *testing.T) {
	if accounts.MaxNameLength != maxCompanyNameLength || accounts.MaxKeyNameLength != maxCompanyNameLength {
		t.Fatalf("the usage gives every name one bound; they are %d, %d and %d",
			maxCompanyNameLength, accounts.MaxNameLength, accounts.MaxKeyNameLength)
	}
	for _, want := range []string{
		fmt.Sprintf("1 to %d characters", maxCompanyNameLength),
		fmt.Sprintf("plain address of at most %d", accounts.MaxEmailLength),
		fmt.Sprintf("0 to %d.", accounts.MaxKeyLifeDays),
	} {
		if !strings.Contains(usage, want) {
			t.Errorf("the usage does not say %q", want)
		}
	}
}
