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
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/acme/codescan-api/functions/accounts"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/awsclient/chain"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/tabledef"
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

Output is JSON on standard output. Every action is recorded in the company's
audit log as the operator's. A minted key is printed once and never again.

exit status: 0 done, 1 failed (the table or AWS answered an error),
             2 usage error, 3 not found (no such company, user or key)
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
		fmt.Fprintln(stderr, "operator:", err)
		fmt.Fprint(stderr, usage)
		return exitUsage
	case errors.Is(err, errNotFound):
		fmt.Fprintln(stderr, "operator:", err)
		return exitNotFound
	}
	fmt.Fprintln(stderr, "operator:", err)
	return exitFailed
}

// command is one sub-command's flags and action.
type command struct {
	name  string
	flags *flag.FlagSet
	run   func(ctx context.Context, st *store.Store, out io.Writer) error
}

// connection says which table to use.
type connection struct {
	local                          bool
	region, stack, table, endpoint string
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
	return cmd.run(store.WithAuditActor(ctx, store.AuditActor{Via: store.ViaOperator}), st, out)
}

// parse reads a command line into its command and connection. The
// connection flags may come before or after the command's name.
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

var connectionFlags = map[string]bool{"local": true, "region": true, "stack": true, "table": true, "endpoint": true}

func (c *connection) bind(fs *flag.FlagSet) {
	fs.BoolVar(&c.local, "local", c.local, "use the DynamoDB Local of make run")
	fs.StringVar(&c.region, "region", c.region, "AWS region of a deployed table")
	fs.StringVar(&c.stack, "stack", c.stack, "CloudFormation stack whose TableName output names the table")
	fs.StringVar(&c.table, "table", c.table, "table name")
	fs.StringVar(&c.endpoint, "endpoint", c.endpoint, "DynamoDB Local endpoint (with --local)")
}

// check refuses a connection that does not say which table it means: the
// tool never falls back to a local table when a region was meant.
func (c connection) check() error {
	switch {
	case c.local == (c.region != ""):
		return fmt.Errorf("%w: pass exactly one of --local and --region", errUsage)
	case c.local && c.stack != "":
		return fmt.Errorf("%w: --stack needs --region", errUsage)
	case !c.local && c.endpoint != "":
		return fmt.Errorf("%w: --endpoint is for --local only", errUsage)
	case !c.local && (c.stack == "") == (c.table == ""):
		return fmt.Errorf("%w: with --region, pass exactly one of --stack and --table", errUsage)
	}
	return nil
}

func (c connection) open(ctx context.Context) (*store.Store, error) {
	if c.local {
		return c.openLocal(ctx)
	}
	cfg, err := chain.Load(ctx, awsconfig.WithRegion(c.region))
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	table := c.table
	if c.stack != "" {
		if table, err = stackTable(ctx, cloudformation.NewFromConfig(cfg), c.stack); err != nil {
			return nil, err
		}
	}
	st := store.New(dynamodb.NewFromConfig(cfg), table)
	// The deployed table exists; check it is reachable and named right.
	if _, err := st.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}); err != nil {
		return nil, fmt.Errorf("table %s in %s: %w", table, c.region, err)
	}
	return st, nil
}

// tableOutput is the stacks' output that names their table (infra/stack.go).
const tableOutput = "TableName"

// stackOutputs is the CloudFormation call stackTable makes.
type stackOutputs interface {
	DescribeStacks(context.Context, *cloudformation.DescribeStacksInput, ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error)
}

// stackTable reads the table name from a stack's outputs.
func stackTable(ctx context.Context, cf stackOutputs, stack string) (string, error) {
	out, err := cf.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(stack)})
	if err != nil {
		return "", fmt.Errorf("stack %s: %w", stack, err)
	}
	if len(out.Stacks) != 1 {
		return "", fmt.Errorf("%w: stack %s", errNotFound, stack)
	}
	for _, o := range out.Stacks[0].Outputs {
		if aws.ToString(o.OutputKey) == tableOutput && aws.ToString(o.OutputValue) != "" {
			return aws.ToString(o.OutputValue), nil
		}
	}
	return "", fmt.Errorf("stack %s has no %s output: is it a codescan-api stack?", stack, tableOutput)
}

func (c connection) openLocal(ctx context.Context) (*store.Store, error) {
	table := c.table
	if table == "" {
		table = os.Getenv("TABLE_NAME")
	}
	if table == "" {
		table = tabledef.DefaultTableName
	}
	endpoint := c.endpoint
	if endpoint == "" {
		endpoint = os.Getenv("DYNAMODB_ENDPOINT")
	}
	if endpoint == "" {
		port := os.Getenv("DYNAMODB_PORT")
		if port == "" {
			port = "8000"
		}
		endpoint = "http://127.0.0.1:" + port
	}
	db, err := config.NewDynamoDB(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	st := store.New(db, table)
	if err := bulkload.CreateTable(ctx, st, true); err != nil {
		return nil, fmt.Errorf("DynamoDB Local at %s: %w", endpoint, err)
	}
	return st, nil
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

type companyJSON struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Active    bool   `json:"active"`
	CreatedAt string `json:"created_at,omitempty"`
}

func companyView(c store.Company) companyJSON {
	return companyJSON{ID: c.ID, Name: c.Name, Active: c.Active(), CreatedAt: c.CreatedAt}
}

type adminJSON struct {
	ID    int64  `json:"id"`
	Email string `json:"email"`
}

type userJSON struct {
	ID          int64    `json:"id"`
	Email       string   `json:"email"`
	FirstName   string   `json:"first_name"`
	LastName    string   `json:"last_name"`
	IsAdmin     bool     `json:"is_admin"`
	Active      bool     `json:"active"`
	Permissions []string `json:"permissions"`
	CreatedAt   string   `json:"created_at,omitempty"`
}

// keyJSON is a key as lists show it: never its secret or its hash.
type keyJSON struct {
	ID         int64  `json:"id"`
	UserID     int64  `json:"user_id"`
	Name       string `json:"name"`
	Prefix     string `json:"prefix"`
	CreatedAt  string `json:"created_at"`
	LastUsedAt string `json:"last_used_at,omitempty"`
	ExpiresAt  string `json:"expires_at,omitempty"`
	RevokedAt  string `json:"revoked_at,omitempty"`
}

func keyView(k store.APIKey) keyJSON {
	return keyJSON{ID: k.ID, UserID: k.UserID, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt,
		LastUsedAt: k.LastUsedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt}
}

func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// idFlag declares a required positive id flag.
type idFlag struct {
	name string
	v    *int64
}

func requireID(fs *flag.FlagSet, name, usage string) idFlag {
	return idFlag{name, fs.Int64(name, 0, usage)}
}

func (f idFlag) get() (int64, error) {
	if *f.v < 1 {
		return 0, fmt.Errorf("%w: --%s is required (a positive id)", errUsage, f.name)
	}
	return *f.v, nil
}

// company reads the company the --company flag names.
func company(ctx context.Context, st *store.Store, f idFlag) (store.Company, error) {
	id, err := f.get()
	if err != nil {
		return store.Company{}, err
	}
	c, err := st.GetCompany(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return c, fmt.Errorf("%w: no company %d", errNotFound, id)
	}
	return c, err
}

func createCompany() command {
	fs := newCommand("create-company")
	name := fs.String("name", "", "company name (unique, ignoring case)")
	email := fs.String("admin-email", "", "first admin's email")
	fullName := fs.String("admin-name", "", `first admin's name ("First Last")`)
	newKey := fs.Bool("new-key", false, "for an existing company: mint another key for the admin with --admin-email")
	return command{name: "create-company", flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		*name, *email, *fullName = strings.TrimSpace(*name), strings.TrimSpace(*email), strings.TrimSpace(*fullName)
		if *name == "" || *email == "" || *fullName == "" {
			return fmt.Errorf("%w: --name, --admin-email and --admin-name are required", errUsage)
		}
		first, last, _ := strings.Cut(*fullName, " ")
		key := auth.NewAPIKey()
		c, admin, created, err := st.CreateCompany(ctx, store.NewCompany{
			Name:   *name,
			Admin:  store.User{Email: *email, FirstName: first, LastName: strings.TrimSpace(last)},
			APIKey: key,
		})
		if err != nil {
			return err
		}
		res := map[string]any{"created": created, "company": companyView(c)}
		switch {
		case created:
			res["admin"], res["api_key"] = adminJSON{admin.ID, admin.Email}, key
		case *newKey:
			admin, err := st.UserByEmail(ctx, c.ID, *email)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("%w: company %d has no user %s", errNotFound, c.ID, *email)
			}
			if err != nil {
				return err
			}
			if !admin.Active || !admin.IsAdmin {
				return fmt.Errorf("user %s of company %d is not an active admin", *email, c.ID)
			}
			if _, err := st.CreateAPIKey(ctx, store.APIKey{CompanyID: c.ID, UserID: admin.ID, Name: "operator-issued key"}, key); err != nil {
				return err
			}
			res["admin"], res["api_key"] = adminJSON{admin.ID, admin.Email}, key
		}
		return printJSON(out, res)
	}}
}

func listCompanies() command {
	fs := newCommand("list-companies")
	return command{name: "list-companies", flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		list := []companyJSON{}
		q := store.PageQuery{Limit: 100}
		for {
			page, res, err := st.ListCompanies(ctx, q)
			if err != nil {
				return err
			}
			for _, c := range page {
				list = append(list, companyView(c))
			}
			if res.Next == "" {
				return printJSON(out, list)
			}
			q.Token = res.Next
		}
	}}
}

func setActive(active bool) command {
	name := map[bool]string{true: "reactivate-company", false: "deactivate-company"}[active]
	fs := newCommand(name)
	id := requireID(fs, "company", "company id")
	return command{name: name, flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		companyID, err := id.get()
		if err != nil {
			return err
		}
		c, changed, err := st.SetCompanyActive(ctx, companyID, active)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w: no company %d", errNotFound, companyID)
		}
		if err != nil {
			return err
		}
		return printJSON(out, map[string]any{"changed": changed, "company": companyView(c)})
	}}
}

func listUsers() command {
	fs := newCommand("list-users")
	id := requireID(fs, "company", "company id")
	return command{name: "list-users", flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		c, err := company(ctx, st, id)
		if err != nil {
			return err
		}
		users, err := st.ListUsers(ctx, c.ID)
		if err != nil {
			return err
		}
		list := make([]userJSON, 0, len(users))
		for _, u := range users {
			perms := u.Permissions
			if perms == nil {
				perms = []string{}
			}
			list = append(list, userJSON{ID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName,
				IsAdmin: u.IsAdmin, Active: u.Active, Permissions: perms, CreatedAt: u.CreatedAt})
		}
		if err := st.Audit(ctx, c.ID, store.AuditEntry{Action: "user.list", TargetType: "company", TargetID: strconv.FormatInt(c.ID, 10)}); err != nil {
			return err
		}
		return printJSON(out, list)
	}}
}

func listKeys() command {
	fs := newCommand("list-keys")
	id := requireID(fs, "company", "company id")
	userID := fs.Int64("user", 0, "only this user's keys")
	return command{name: "list-keys", flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		c, err := company(ctx, st, id)
		if err != nil {
			return err
		}
		if *userID < 0 {
			return fmt.Errorf("%w: --user must be a positive id", errUsage)
		}
		target, targetID := "company", c.ID
		if *userID != 0 {
			if _, err := user(ctx, st, c.ID, *userID); err != nil {
				return err
			}
			target, targetID = "user", *userID
		}
		list := []keyJSON{}
		q := store.PageQuery{Limit: 100}
		for {
			page, res, _, err := st.ListAPIKeys(ctx, c.ID, *userID, q)
			if err != nil {
				return err
			}
			for _, k := range page {
				list = append(list, keyView(k))
			}
			if res.Next == "" {
				break
			}
			q.Token = res.Next
		}
		if err := st.Audit(ctx, c.ID, store.AuditEntry{Action: "api_key.list", TargetType: target, TargetID: strconv.FormatInt(targetID, 10)}); err != nil {
			return err
		}
		return printJSON(out, list)
	}}
}

// user reads a user of a company, or errNotFound.
func user(ctx context.Context, st *store.Store, companyID, userID int64) (store.User, error) {
	u, err := st.GetUser(ctx, companyID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return u, fmt.Errorf("%w: company %d has no user %d", errNotFound, companyID, userID)
	}
	return u, err
}

func mintKey() command {
	fs := newCommand("mint-key")
	id := requireID(fs, "company", "company id")
	uid := requireID(fs, "user", "id of the user the key authenticates as")
	name := fs.String("name", "operator-issued key", "the key's name")
	days := fs.Int("expires-in-days", 0, "days until the key expires (0: never)")
	return command{name: "mint-key", flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		c, err := company(ctx, st, id)
		if err != nil {
			return err
		}
		userID, err := uid.get()
		if err != nil {
			return err
		}
		*name = strings.TrimSpace(*name)
		switch {
		case *name == "" || len(*name) > accounts.MaxKeyNameLength:
			return fmt.Errorf("%w: --name must be 1 to %d bytes", errUsage, accounts.MaxKeyNameLength)
		case *days < 0 || *days > accounts.MaxKeyLifeDays:
			return fmt.Errorf("%w: --expires-in-days must be 0 to %d", errUsage, accounts.MaxKeyLifeDays)
		}
		u, err := user(ctx, st, c.ID, userID)
		if err != nil {
			return err
		}
		if !u.Active {
			return fmt.Errorf("user %d of company %d is inactive: a key of theirs would not authenticate", userID, c.ID)
		}
		k := store.APIKey{CompanyID: c.ID, UserID: u.ID, Name: *name}
		if *days > 0 {
			k.ExpiresAt = time.Now().UTC().Add(time.Duration(*days) * 24 * time.Hour).Format(time.RFC3339)
		}
		secret := auth.NewAPIKey()
		k, err = st.CreateAPIKey(ctx, k, secret)
		if err != nil {
			return err
		}
		return printJSON(out, map[string]any{"key": keyView(k), "api_key": secret})
	}}
}

func revokeKey() command {
	fs := newCommand("revoke-key")
	id := requireID(fs, "company", "company id")
	kid := requireID(fs, "key", "key id (list-keys shows it)")
	return command{name: "revoke-key", flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		c, err := company(ctx, st, id)
		if err != nil {
			return err
		}
		keyID, err := kid.get()
		if err != nil {
			return err
		}
		before, err := st.GetAPIKey(ctx, c.ID, keyID)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w: company %d has no key %d", errNotFound, c.ID, keyID)
		}
		if err != nil {
			return err
		}
		after, err := st.RevokeAPIKey(ctx, c.ID, keyID)
		if err != nil {
			return err
		}
		return printJSON(out, map[string]any{"changed": before.RevokedAt == "", "key": keyView(after)})
	}}
}
