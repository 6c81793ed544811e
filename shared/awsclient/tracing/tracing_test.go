package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/acme/codescan-api/shared/awsclient"
)

const (
	root   = "1-5759e988-bd862e3fe1be46a994272793"
	parent = "53995c3f42cd8ad8"
)

// lambda makes the environment a Lambda function's, with a UDP listener
// as the X-Ray daemon, and returns a DynamoDB client built as functions
// build theirs, pointed at DynamoDB Local.
func lambda(t *testing.T) (*dynamodb.Client, *net.UDPConn) {
	t.Helper()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		t.Fatal("DYNAMODB_ENDPOINT is not set: run under go run ./scripts/withddb")
	}
	daemon, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Close() })
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "codescan-test")
	t.Setenv("AWS_XRAY_DAEMON_ADDRESS", daemon.LocalAddr().String())
	t.Setenv("_X_AMZN_TRACE_ID", "")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	cfg, err := awsclient.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) }), daemon
}

// invocation is the context aws-lambda-go gives a handler.
func invocation(sampled string) context.Context {
	//lint:ignore SA1029 the key aws-lambda-go uses
	return context.WithValue(context.Background(), "x-amzn-trace-id", "Root="+root+";Parent="+parent+";Sampled="+sampled)
}

// next reads the next document the daemon receives.
func next(t *testing.T, daemon *net.UDPConn) map[string]any {
	t.Helper()
	buf := make([]byte, 64<<10)
	n, err := daemon.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := bytes.Cut(buf[:n], []byte("\n"))
	if !ok || string(head) != `{"format":"json","version":1}` {
		t.Fatalf("no X-Ray header line: %q", buf[:n])
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestSubsegmentPerCall(t *testing.T) {
	db, daemon := lambda(t)
	// Not sampled: nothing is sent, so the first document is the next call's.
	if _, err := db.ListTables(invocation("0"), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ListTables(invocation("1"), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}
	doc := next(t, daemon)
	meta, _ := doc["aws"].(map[string]any)
	if doc["name"] != "DynamoDB" || meta["operation"] != "ListTables" || doc["type"] != "subsegment" ||
		doc["namespace"] != "aws" || doc["trace_id"] != root || doc["parent_id"] != parent {
		t.Fatalf("subsegment = %v", doc)
	}
	if meta["region"] != "us-east-1" || doc["start_time"].(float64) > doc["end_time"].(float64) || len(doc["id"].(string)) != 16 {
		t.Fatalf("subsegment = %v", doc)
	}
	if doc["error"] != nil || doc["fault"] != nil {
		t.Fatalf("a call that succeeded is marked failed: %v", doc)
	}

	// A refused call is an error (4xx), not a fault.
	if _, err := db.DescribeTable(invocation("1"), &dynamodb.DescribeTableInput{TableName: aws.String("no-such-table")}); err == nil {
		t.Fatal("DescribeTable of a missing table succeeded")
	}
	doc = next(t, daemon)
	http, _ := doc["http"].(map[string]any)
	res, _ := http["response"].(map[string]any)
	if doc["aws"].(map[string]any)["operation"] != "DescribeTable" || doc["error"] != true || doc["fault"] != nil || res["status"] != float64(400) {
		t.Fatalf("subsegment of a refused call = %v", doc)
	}
}

func TestOffOutsideLambda(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	cfg, err := awsclient.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.APIOptions) != 0 {
		t.Fatalf("clients are instrumented outside Lambda: %d API options", len(cfg.APIOptions))
	}
}
