package store_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
)

// conflicting makes the next n transactions of st's client fail as real
// DynamoDB fails them under contention (DynamoDB Local never does).
func conflicting(st *store.Store, n int32) *atomic.Int32 {
	left := &atomic.Int32{}
	left.Store(n)
	st.SetClient(dynamodb.New(st.Client().Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			// Inside the SDK's retry loop, where DynamoDB's answers arrive.
			return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("InjectTransactionConflict",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					if middleware.GetOperationName(ctx) == "TransactWriteItems" && left.Add(-1) >= 0 {
						return middleware.FinalizeOutput{}, middleware.Metadata{}, &types.TransactionCanceledException{
							Message:             aws.String("Transaction cancelled"),
							CancellationReasons: []types.CancellationReason{{Code: aws.String("TransactionConflict")}},
						}
					}
					return next.HandleFinalize(ctx, in)
				}), "Retry", middleware.After)
		})
	}))
	return left
}

func TestAccountWritesRetryTransactionConflicts(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := store.WithAuditActor(context.Background(), store.AuditActor{Via: store.ViaOperator})
	left := conflicting(st, 2)
	c, admin, created, err := st.CreateCompany(ctx, store.NewCompany{
		Name: "Acme", Admin: store.User{Email: "a@acme.test", FirstName: "A", LastName: "B"}, APIKey: "csk_test-key-1",
	})
	if err != nil || !created {
		t.Fatalf("CreateCompany after 2 conflicts: %v", err)
	}
	left.Store(2)
	if _, err := st.CreateAPIKey(ctx, store.APIKey{CompanyID: c.ID, UserID: admin.ID, Name: "k"}, "csk_test-key-2"); err != nil {
		t.Fatalf("CreateAPIKey after 2 conflicts: %v", err)
	}
	left.Store(2)
	u, err := st.CreateUser(ctx, store.User{CompanyID: c.ID, Email: "b@acme.test", FirstName: "B", LastName: "C", IsAdmin: true, Active: true})
	if err != nil {
		t.Fatalf("CreateUser after 2 conflicts: %v", err)
	}
	left.Store(2)
	inactive := false
	if _, _, err := st.UpdateUser(ctx, c.ID, u.ID, store.UserChange{Active: &inactive}); err != nil {
		t.Fatalf("UpdateUser after 2 conflicts: %v", err)
	}
	// The guard still holds after retries: the last admin stays.
	left.Store(2)
	if _, _, err := st.UpdateUser(ctx, c.ID, admin.ID, store.UserChange{Active: &inactive}); !errors.Is(err, store.ErrLastAdmin) {
		t.Fatalf("demoting the last admin: %v", err)
	}
	// Endless contention is an error, never a write.
	left.Store(100)
	if _, err := st.CreateAPIKey(ctx, store.APIKey{CompanyID: c.ID, UserID: admin.ID, Name: "k"}, "csk_test-key-3"); err == nil {
		t.Fatal("CreateAPIKey succeeded through endless conflicts")
	}
	left.Store(0)
	if _, err := st.CredentialByAPIKey(context.Background(), "csk_test-key-3", time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the failed key authenticates: %v", err)
	}
	keys, _, total, err := st.ListAPIKeys(context.Background(), c.ID, 0, store.PageQuery{Limit: 10})
	if err != nil || total != 2 || len(keys) != 2 {
		t.Fatalf("keys %d of %d: %v", len(keys), total, err)
	}
}
