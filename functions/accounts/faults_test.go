package accounts_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/page"
)

// failOnce fails the at-th DynamoDB call of a client, once.
type failOnce struct {
	mu        sync.Mutex
	calls, at int
	err       error
}

func (f *failOnce) add(stack *middleware.Stack) error {
	return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("inject-fault",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			f.mu.Lock()
			f.calls++
			fail := f.calls == f.at
			f.mu.Unlock()
			if fail {
				return middleware.FinalizeOutput{}, middleware.Metadata{}, f.err
			}
			return next.HandleFinalize(ctx, in)
		}), "Retry", middleware.After)
}

// TestCreateKeyUnderFaults fails each DynamoDB call of POST /api-keys in
// turn with each refusal real DynamoDB gives under load: the answer is 201
// with a working key and exactly one more key counted, or 503 with
// Retry-After and no key at all; the registry's fault table cannot compare
// states because every run mints another key.
func TestCreateKeyUnderFaults(t *testing.T) {
	faults := map[string]error{
		"throughput": &types.ProvisionedThroughputExceededException{Message: aws.String("injected")},
		"throttling": &smithy.GenericAPIError{Code: "ThrottlingException", Message: "injected"},
		"conflict": &types.TransactionCanceledException{Message: aws.String("injected"),
			CancellationReasons: []types.CancellationReason{{Code: aws.String("TransactionConflict")}}},
		"timeout": &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded},
	}
	calls := 0
	for k := 1; k == 1 || k <= calls; k++ {
		for name, fault := range faults {
			w := newWorld(t)
			acme := w.env.Company(t, "Acme")
			w.do(t, "GET", "/api-keys", "", testenv.Key(acme.Admin), http.StatusOK) // its first use is recorded
			inj := &failOnce{at: k, err: fault}
			opts := w.env.Store.Client().Options()
			opts.APIOptions = append(slices.Clone(opts.APIOptions), inj.add)
			w.env.Store.SetClient(dynamodb.New(opts))

			res := testenv.Do(t, w.h, "POST", "/api-keys", `{"name":"CI"}`, testenv.Key(acme.Admin)...)
			if calls == 0 {
				inj.mu.Lock()
				calls = inj.calls
				inj.mu.Unlock()
			}
			inj.mu.Lock()
			inj.at = 0
			inj.mu.Unlock()
			keysPage, err := w.env.Store.Tenancy.ListAPIKeys(context.Background(), acme.ID, 0, page.Request{Limit: 10})
			keys, total := keysPage.Items, keysPage.Count()
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case res.Status == http.StatusCreated:
				var out struct{ Key string }
				res.Decode(t, &out)
				if _, err := w.env.Store.Tenancy.CredentialByAPIKey(context.Background(), out.Key, time.Now()); err != nil {
					t.Fatalf("call %d %s: the created key does not authenticate: %v", k, name, err)
				}
				if total != 2 || len(keys) != 2 {
					t.Fatalf("call %d %s: %d keys, %d counted; want 2", k, name, len(keys), total)
				}
			case res.Status == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "":
				if total != 1 || len(keys) != 1 {
					t.Fatalf("call %d %s: 503 left %d keys, %d counted", k, name, len(keys), total)
				}
			default:
				t.Fatalf("call %d %s: %d %s", k, name, res.Status, res.Body)
			}
		}
	}
	if calls < 4 {
		t.Fatalf("POST /api-keys made %d DynamoDB calls; the test injected nothing useful", calls)
	}
}
