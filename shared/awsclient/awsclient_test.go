package awsclient_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/awsclient"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// attempts counts the attempts of every call of a client and fails the
// first `fail` of them with err (all of them when fail < 0). It sits
// inside the SDK's retry loop, so what it fails is what the retryer sees.
type attempts struct {
	mu    sync.Mutex
	n     int
	fail  int
	err   func() error
	match string // operation name; "" for every operation
}

func (a *attempts) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

func (a *attempts) add(stack *middleware.Stack) error {
	return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("count-attempts",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			if a.match != "" && middleware.GetOperationName(ctx) != a.match {
				return next.HandleFinalize(ctx, in)
			}
			a.mu.Lock()
			a.n++
			fail := a.err != nil && (a.fail < 0 || a.n <= a.fail)
			a.mu.Unlock()
			if fail {
				return middleware.FinalizeOutput{}, middleware.Metadata{}, a.err()
			}
			return next.HandleFinalize(ctx, in)
		}), "Retry", middleware.After)
}

// counted is st with its client's attempts counted by a.
func counted(st *store.Store, a *attempts) *store.Store {
	opts := st.Client().Options()
	opts.APIOptions = append(append([]func(*middleware.Stack) error{}, opts.APIOptions...), a.add)
	return store.New(dynamodb.New(opts), st.TableName())
}

func put(ctx context.Context, st *store.Store, pk string, cond *string) error {
	_, err := st.Client().PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(st.TableName()), ConditionExpression: cond,
		Item: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "x"}},
	})
	return err
}

func cancelled(codes ...string) func() error {
	return func() error {
		var reasons []types.CancellationReason
		for _, c := range codes {
			reasons = append(reasons, types.CancellationReason{Code: aws.String(c)})
		}
		return &types.TransactionCanceledException{Message: aws.String("injected"), CancellationReasons: reasons}
	}
}

// refusals are what DynamoDB answers under load: each is retried.
var refusals = map[string]func() error{
	"ProvisionedThroughputExceeded": func() error {
		return &types.ProvisionedThroughputExceededException{Message: aws.String("injected")}
	},
	"ThrottlingException":  func() error { return &smithy.GenericAPIError{Code: "ThrottlingException", Message: "injected"} },
	"RequestLimitExceeded": func() error { return &types.RequestLimitExceeded{Message: aws.String("injected")} },
	"TransactionConflictException": func() error {
		return &smithy.GenericAPIError{Code: "TransactionConflictException", Message: "injected"}
	},
	"InternalServerError":            func() error { return &types.InternalServerError{Message: aws.String("injected")} },
	"TransactionCanceled: conflict":  cancelled("None", "TransactionConflict"),
	"TransactionCanceled: throttled": cancelled("ThrottlingError", "None"),
	"timeout":                        func() error { return &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded} },
	"connection refused": func() error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	},
}

// Every refusal is retried by the client itself: two refused attempts,
// then the write lands, in three attempts.
func TestRefusalsAreRetriedByTheClient(t *testing.T) {
	base := testenv.NewStore(t)
	ctx := context.Background()
	for name, refusal := range refusals {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := &attempts{fail: 2, err: refusal}
			st := counted(base, a)
			if err := put(ctx, st, name, nil); err != nil {
				t.Fatal(err)
			}
			if got := a.count(); got != 3 {
				t.Fatalf("%d attempts, want 3", got)
			}
			a.err = nil
			out, err := st.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.TableName()),
				Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: name}, "SK": &types.AttributeValueMemberS{Value: "x"}}})
			if err != nil || out.Item == nil {
				t.Fatalf("the retried write is not stored: %v %v", out, err)
			}
		})
	}
}

// A refusal that lasts is tried exactly MaxAttempts times, and what is
// left is transient (a 503 for the API's caller).
func TestBudget(t *testing.T) {
	base := testenv.NewStore(t)
	for name, refusal := range refusals {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := &attempts{fail: -1, err: refusal}
			err := put(context.Background(), counted(base, a), "budget", nil)
			var maxed *retry.MaxAttemptsError
			if !errors.As(err, &maxed) || !ddb.Transient(err) {
				t.Fatalf("err %v: want the budget spent, transient", err)
			}
			if got := a.count(); got != awsclient.MaxAttempts {
				t.Fatalf("%d attempts, want %d", got, awsclient.MaxAttempts)
			}
		})
	}
}

// One policy, not two stacked: a store write whose every DynamoDB call is
// throttled makes MaxAttempts attempts in all (the store used to retry 10
// times around the SDK's 3) and fails as unavailable.
func TestStoreWriteIsNotRetriedTwice(t *testing.T) {
	a := &attempts{fail: -1, err: refusals["ThrottlingException"]}
	st := counted(testenv.NewStore(t), a)
	_, err := st.Catalog.CreatePolicy(context.Background(), schema.Policy{CompanyID: 1, Name: "No secrets", PolicyType: "BLAST", Active: true})
	if !errors.Is(err, ddb.ErrUnavailable) {
		t.Fatalf("err %v, want ErrUnavailable", err)
	}
	if got := a.count(); got != awsclient.MaxAttempts {
		t.Fatalf("%d attempts, want %d", got, awsclient.MaxAttempts)
	}
}

// What DynamoDB Local itself refuses for good is not retried: a failed
// condition, a transaction cancelled by one (even beside a conflict), an
// invalid request.
func TestFinalAnswersAreNotRetried(t *testing.T) {
	base := testenv.NewStore(t)
	ctx := context.Background()
	if err := put(ctx, base, "taken", nil); err != nil {
		t.Fatal(err)
	}
	notExists := aws.String("attribute_not_exists(PK)")
	txPut := func(pk string) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(base.TableName()), ConditionExpression: notExists,
			Item: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "x"}}}}
	}
	cases := map[string]struct {
		call   func(st *store.Store) error
		inject func() error // on the first attempt, else DynamoDB Local's answer
	}{
		"condition failed": {call: func(st *store.Store) error { return put(ctx, st, "taken", notExists) }},
		"transaction condition failed": {call: func(st *store.Store) error {
			_, err := st.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{txPut("free"), txPut("taken")}})
			return err
		}},
		"validation": {call: func(st *store.Store) error {
			_, err := st.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.TableName()),
				Key: map[string]types.AttributeValue{"nope": &types.AttributeValueMemberS{Value: "x"}}})
			return err
		}},
		"transaction cancelled for a condition beside a conflict": {
			call:   func(st *store.Store) error { return put(ctx, st, "fresh", nil) },
			inject: cancelled("ConditionalCheckFailed", "TransactionConflict"),
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			a := &attempts{fail: 1, err: c.inject}
			err := c.call(counted(base, a))
			if err == nil || ddb.Transient(err) {
				t.Fatalf("err %v: want a final, non-transient error", err)
			}
			if got := a.count(); got != 1 {
				t.Fatalf("%d attempts, want 1", got)
			}
		})
	}
}

// A transaction that DynamoDB cancelled for a conflict is retried with
// its idempotency token: against DynamoDB Local, the retried transaction
// commits once.
func TestTransactionConflictRetriedOnce(t *testing.T) {
	base := testenv.NewStore(t)
	ctx := context.Background()
	a := &attempts{fail: 2, err: cancelled("TransactionConflict"), match: "TransactWriteItems"}
	st := counted(base, a)
	item := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "tx"}, "SK": &types.AttributeValueMemberS{Value: "x"}}
	_, err := st.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(st.TableName()), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.count(); got != 3 {
		t.Fatalf("%d attempts, want 3", got)
	}
}

// Waits grow from BaseDelay (throttling: from one second) and never pass
// MaxBackoff; jitter draws each below its bound.
func TestBackoffBounds(t *testing.T) {
	r := awsclient.Retryer()
	conflict := cancelled("TransactionConflict")()
	throttled := refusals["ThrottlingException"]()
	for attempt := 1; attempt < awsclient.MaxAttempts; attempt++ {
		for _, c := range []struct {
			err   error
			bound time.Duration
		}{
			{conflict, min(awsclient.BaseDelay<<(attempt-1), awsclient.MaxBackoff)},
			{throttled, min(time.Second<<(attempt-1), awsclient.MaxBackoff)},
		} {
			var longest time.Duration
			for range 200 {
				d, err := r.RetryDelay(attempt, c.err)
				if err != nil || d < 0 || d > c.bound {
					t.Fatalf("attempt %d after %v: wait %v (%v), want within [0, %v]", attempt, c.err, d, err, c.bound)
				}
				longest = max(longest, d)
			}
			if longest < c.bound/2 {
				t.Errorf("attempt %d after %v: longest of 200 waits %v, bound %v", attempt, c.err, longest, c.bound)
			}
		}
	}
}

// A function's configuration comes from the environment the Lambda runtime
// sets, with the retry policy; without it, a clear error.
func TestFromEnv(t *testing.T) {
	t.Setenv("AWS_REGION", "eu-central-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "session")
	cfg, err := awsclient.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || cfg.Region != "eu-central-1" || creds.AccessKeyID != "AKIDEXAMPLE" || creds.SessionToken != "session" {
		t.Errorf("config %s %+v %v", cfg.Region, creds, err)
	}
	if cfg.Retryer == nil || cfg.Retryer().MaxAttempts() != awsclient.MaxAttempts {
		t.Error("the retry policy is not the configuration's")
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	if _, err := awsclient.FromEnv(); err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("without credentials: %v", err)
	}
}
