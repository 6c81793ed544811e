package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/acme/codescan-api/shared/awsclient/chain"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/tabledef"
)

// connection says which table to use.
type connection struct {
	local                          bool
	region, stack, table, endpoint string
}

var connectionFlags = map[string]bool{"local": true, "region": true, "stack": true, "table": true, "endpoint": true}

func (c *connection) bind(fs *flag.FlagSet) {
	fs.BoolVar(&c.local, "local", c.local, "use the DynamoDB Local of make run")
	fs.StringVar(&c.region, "region", c.region, "AWS region of a deployed table")
	fs.StringVar(&c.stack, "stack", c.stack, "CloudFormation stack whose TableName output names the table")
	fs.StringVar(&c.table, "table", c.table, "table name")
	fs.StringVar(&c.endpoint, "endpoint", c.endpoint, "DynamoDB Local endpoint (with --local)")
}

// check refuses a connection that does not say which table it means (the
// tool never falls back to a local table when a region was meant), or
// whose values could not name one (see connectionValue).
func (c connection) check() error {
	for _, v := range []struct{ flag, value string }{
		{"--region", c.region}, {"--stack", c.stack}, {"--table", c.table}, {"--endpoint", c.endpoint},
	} {
		if err := connectionValue(v.flag, v.value); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
	}
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
