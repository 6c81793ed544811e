// Command operator administers tenants from outside the API: it creates a
// company with its first admin (printing that admin's first API key, once),
// lists companies, and deactivates or reactivates a company.
//
//	go run ./scripts/operator create-company --name "Acme" --admin-email ada@acme.example --admin-name "Ada Lovelace"
//	go run ./scripts/operator list-companies
//	go run ./scripts/operator deactivate-company --id 3
//	go run ./scripts/operator reactivate-company --id 3
//
// It talks to DynamoDB Local by default (DYNAMODB_ENDPOINT, else
// http://127.0.0.1:${DYNAMODB_PORT:-8000}; table TABLE_NAME, else codescan,
// created when missing) and, with --region, to a deployed stack's table
// (--table, its TableName output) through the standard AWS credential chain.
// Every change is recorded in the company's audit log as the operator's.
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

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/awsclient"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/tabledef"
)

const usage = `usage: operator <command> [flags]

commands:
  create-company      --name NAME --admin-email EMAIL --admin-name "FIRST LAST" [--new-key]
  list-companies
  deactivate-company  --id ID
  reactivate-company  --id ID

connection flags (every command):
  --region REGION  use the deployed table in REGION (standard AWS credential chain)
  --table NAME     table name (default TABLE_NAME, else codescan)
  --endpoint URL   DynamoDB Local endpoint (default DYNAMODB_ENDPOINT, else http://127.0.0.1:${DYNAMODB_PORT:-8000})
`

func main() {
	ctx := context.Background()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
		if errors.Is(err, errUsage) {
			fmt.Fprint(os.Stderr, usage)
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("invalid arguments")

// command is one sub-command's flags and action.
type command struct {
	flags *flag.FlagSet
	run   func(ctx context.Context, st *store.Store, out io.Writer) error
}

// connection says which table to use.
type connection struct {
	region, table, endpoint string
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	cmd, conn, err := parse(args)
	if err != nil {
		return err
	}
	st, err := conn.open(ctx)
	if err != nil {
		return err
	}
	return execute(ctx, cmd, st, out)
}

// execute runs cmd on st; its changes are audited as the operator's.
func execute(ctx context.Context, cmd command, st *store.Store, out io.Writer) error {
	return cmd.run(store.WithAuditActor(ctx, store.AuditActor{Via: store.ViaOperator}), st, out)
}

// parse reads a command line into its command and connection.
func parse(args []string) (command, connection, error) {
	var conn connection
	cmd, ok := commands()[args[0]]
	if !ok {
		return command{}, conn, fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	cmd.flags.StringVar(&conn.region, "region", "", "AWS region of a deployed table")
	cmd.flags.StringVar(&conn.table, "table", "", "table name")
	cmd.flags.StringVar(&conn.endpoint, "endpoint", "", "DynamoDB Local endpoint")
	cmd.flags.SetOutput(io.Discard)
	if err := cmd.flags.Parse(args[1:]); err != nil {
		return command{}, conn, fmt.Errorf("%w: %v", errUsage, err)
	}
	if cmd.flags.NArg() > 0 {
		return command{}, conn, fmt.Errorf("%w: unexpected %q", errUsage, cmd.flags.Arg(0))
	}
	return cmd, conn, nil
}

func (c connection) open(ctx context.Context) (*store.Store, error) {
	table := c.table
	if table == "" {
		table = os.Getenv("TABLE_NAME")
	}
	if table == "" {
		table = tabledef.DefaultTableName
	}
	if c.region != "" {
		if c.endpoint != "" {
			return nil, fmt.Errorf("%w: --region and --endpoint exclude each other", errUsage)
		}
		cfg, err := awsclient.Load(ctx, awsconfig.WithRegion(c.region))
		if err != nil {
			return nil, fmt.Errorf("aws config: %w", err)
		}
		st := store.New(dynamodb.NewFromConfig(cfg), table)
		// The deployed table exists; check it is reachable and named right.
		if _, err := st.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}); err != nil {
			return nil, fmt.Errorf("table %s in %s: %w", table, c.region, err)
		}
		return st, nil
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
	if err := st.CreateTable(ctx, true); err != nil {
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
	}
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

func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func createCompany() command {
	fs := flag.NewFlagSet("create-company", flag.ContinueOnError)
	name := fs.String("name", "", "company name (unique, ignoring case)")
	email := fs.String("admin-email", "", "first admin's email")
	fullName := fs.String("admin-name", "", `first admin's name ("First Last")`)
	newKey := fs.Bool("new-key", false, "for an existing company: mint another key for the admin with --admin-email")
	return command{flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
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
				return fmt.Errorf("company %d has no user %s", c.ID, *email)
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
	fs := flag.NewFlagSet("list-companies", flag.ContinueOnError)
	return command{flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		list := []companyJSON{}
		pr := store.PageRequest{Size: 100}
		for {
			page, next, err := st.ListCompanies(ctx, pr)
			if err != nil {
				return err
			}
			for _, c := range page {
				list = append(list, companyView(c))
			}
			if next == "" {
				return printJSON(out, list)
			}
			pr.Token = next
		}
	}}
}

func setActive(active bool) command {
	name := map[bool]string{true: "reactivate-company", false: "deactivate-company"}[active]
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	id := fs.Int64("id", 0, "company id")
	return command{flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		if *id < 1 {
			return fmt.Errorf("%w: --id is required", errUsage)
		}
		c, changed, err := st.SetCompanyActive(ctx, *id, active)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no company %d", *id)
		}
		if err != nil {
			return err
		}
		return printJSON(out, map[string]any{"changed": changed, "company": companyView(c)})
	}}
}
