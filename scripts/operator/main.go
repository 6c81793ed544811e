// Command operator administers tenants from outside the API: companies
// (create with a first admin, list, deactivate, reactivate), their users and
// API keys (list, mint, revoke). Run `operator --help` or `operator
// <command> --help`.
//
//	go run ./scripts/operator --local create-company --name "Acme" --admin-email ada@acme.example --admin-name "Ada Lovelace"
//	go run ./scripts/operator --region eu-central-1 --stack codescan-api-prod-eu list-users --company 3
//
// Every command names its table explicitly: --local for the DynamoDB Local
// of `make run` (the table is created there when missing), or --region with
// --stack (the table is the stack's TableName output) or --table. Every
// action is recorded in the company's audit log as the operator's, reads of
// a tenant's users and keys included: a tenant can see when the service's
// operator looked at its accounts.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ledger"
)

const usage = `usage: operator (--local | --region REGION (--stack NAME | --table NAME)) <command> [flags]
       operator [<command>] --help

commands:
  create-company      --name NAME --admin-email EMAIL --admin-name "FIRST LAST" [--new-key]
  list-companies
  deactivate-company  --company ID
  reactivate-company  --company ID
  list-users          --company ID
  list-keys           --company ID [--user ID]
  mint-key            --company ID --user ID [--name NAME] [--expires-in-days N]
  revoke-key          --company ID --key ID

connection (before or after the command; exactly one of --local and --region):
  --local            the DynamoDB Local of make run: --endpoint URL, else DYNAMODB_ENDPOINT,
                     else http://127.0.0.1:${DYNAMODB_PORT:-8000}; table --table, else TABLE_NAME,
                     else codescan (created when missing)
  --region REGION    a deployed table, through the standard AWS credential chain, named by
    --stack NAME     the CloudFormation stack (its TableName output), or
    --table NAME     the table itself

Values are held to the API's rules before anything is sent to AWS. Names
(--name of a company or a key, each part of --admin-name) are single-line
text of 1 to 100 characters without control or bidi characters, trimmed
and NFC-normalized; --admin-email is a plain address of at most 254 characters;
ids are positive integers without sign or leading zero; --expires-in-days is
0 to 3650. A refused value is a usage error and is never printed back whole.

Output is JSON on standard output. Every action is recorded in the company's
audit log as the operator's. A minted key is printed once and never again.

exit status: 0 done, 1 failed (the table or AWS answered an error),
             2 usage error (a value the API would refuse included),
             3 not found (no such company, user or key)
`

func main() {
	os.Exit(runMain(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitNotFound = 3
)

var (
	errUsage    = errors.New("invalid arguments")
	errNotFound = errors.New("not found")
	// errHelp asks for the usage on standard output and a clean exit.
	errHelp = errors.New("help requested")
)

func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := run(ctx, args, stdout)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		fmt.Fprint(stdout, helpText(args))
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "operator:", clip(printable(err.Error()), maxUsageLine))
		fmt.Fprint(stderr, usage)
		return exitUsage
	case errors.Is(err, errNotFound):
		fmt.Fprintln(stderr, "operator:", printable(err.Error()))
		return exitNotFound
	}
	// Not clipped: the cause of a failure is at the end of an AWS error.
	fmt.Fprintln(stderr, "operator:", printable(err.Error()))
	return exitFailed
}

// command is one sub-command's flags and action.
type command struct {
	name  string
	flags *flag.FlagSet
	// check holds the flags' values to the API's rules (validate.go) and
	// keeps them, normalized, for run. parse calls it: nothing is sent
	// to AWS, the connection's opening included, before it passed.
	check func() error
	run   func(ctx context.Context, st *store.Store, out io.Writer) error
}

func run(ctx context.Context, args []string, out io.Writer) error {
	cmd, conn, err := parse(args)
	if err != nil {
		return err
	}
	if err := conn.check(); err != nil {
		return err
	}
	st, err := conn.open(ctx)
	if err != nil {
		return err
	}
	return execute(ctx, cmd, st, out)
}

// execute runs cmd on st; its actions are audited as the operator's.
func execute(ctx context.Context, cmd command, st *store.Store, out io.Writer) error {
	return cmd.run(ledger.WithAuditActor(ctx, ledger.AuditActor{Via: ledger.ViaOperator}), st, out)
}

// parse reads and checks a command line into its command and connection.
// The connection flags may come before or after the command's name.
func parse(args []string) (command, connection, error) {
	var conn connection
	global := flag.NewFlagSet("operator", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	conn.bind(global)
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return command{}, conn, errHelp
		}
		return command{}, conn, fmt.Errorf("%w: %v", errUsage, err)
	}
	rest := global.Args()
	if len(rest) == 0 {
		return command{}, conn, fmt.Errorf("%w: no command", errUsage)
	}
	if rest[0] == "help" {
		return command{}, conn, errHelp
	}
	cmd, ok := commands()[rest[0]]
	if !ok {
		return command{}, conn, fmt.Errorf("%w: unknown command %q", errUsage, rest[0])
	}
	conn.bind(cmd.flags)
	cmd.flags.SetOutput(io.Discard)
	if err := cmd.flags.Parse(rest[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return command{}, conn, errHelp
		}
		return command{}, conn, fmt.Errorf("%w: %s: %v", errUsage, cmd.name, err)
	}
	if cmd.flags.NArg() > 0 {
		return command{}, conn, fmt.Errorf("%w: %s: unexpected %q", errUsage, cmd.name, cmd.flags.Arg(0))
	}
	if err := cmd.check(); err != nil {
		return command{}, conn, fmt.Errorf("%w: %s: %w", errUsage, cmd.name, err)
	}
	return cmd, conn, nil
}

// helpText is the usage, followed by the flags of the command args name.
func helpText(args []string) string {
	for _, a := range args {
		cmd, ok := commands()[a]
		if !ok {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "usage: operator (--local | --region REGION (--stack NAME | --table NAME)) %s [flags]\n\nflags of %s:\n", cmd.name, cmd.name)
		cmd.flags.VisitAll(func(f *flag.Flag) {
			if !connectionFlags[f.Name] {
				fmt.Fprintf(&b, "  --%-16s %s\n", f.Name, f.Usage)
			}
		})
		return b.String() + "\n" + usage
	}
	return usage
}

func commands() map[string]command {
	return map[string]command{
		"create-company":     createCompany(),
		"list-companies":     listCompanies(),
		"deactivate-company": setActive(false),
		"reactivate-company": setActive(true),
		"list-users":         listUsers(),
		"list-keys":          listKeys(),
		"mint-key":           mintKey(),
		"revoke-key":         revokeKey(),
	}
}

func newCommand(name string) *flag.FlagSet {
	return flag.NewFlagSet(name, flag.ContinueOnError)
}

func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// noCheck is the check of a command without flags of its own.
func noCheck() error { return nil }

// firstError runs checks in order and returns the first failure.
func firstError(checks ...func() error) error {
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

// idFlag is an id flag, read as the API reads ids (httpapi.ParseID: one
// form, no sign or leading zero) by its check; id holds it after.
type idFlag struct {
	name     string
	raw      *string
	optional bool // absent is id 0
	id       int64
}

func requireID(fs *flag.FlagSet, name, usage string) *idFlag {
	return &idFlag{name: name, raw: fs.String(name, "", usage)}
}

func optionalID(fs *flag.FlagSet, name, usage string) *idFlag {
	return &idFlag{name: name, raw: fs.String(name, "", usage), optional: true}
}

func (f *idFlag) check() error {
	if *f.raw == "" {
		if f.optional {
			return nil
		}
		return fmt.Errorf("--%s is required (a positive id)", f.name)
	}
	id, err := httpapi.ParseID("--"+f.name, *f.raw)
	if err != nil {
		return apiMessage(err)
	}
	f.id = id
	return nil
}
