package tenancy_test

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
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newArea is the tenancy area on a fresh table of its own, and the table.
func newArea(t *testing.T) (*tenancy.Tenancy, *ddb.Table) {
	t.Helper()
	tb := ddb.New(testenv.Table(t))
	return tenancy.New(tb, &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention}), tb
}

// conflicting makes the next n transactions of tb's client fail as real
// DynamoDB fails them under contention (DynamoDB Local never does).
func conflicting(tb *ddb.Table, n int32) *atomic.Int32 {
	left := &atomic.Int32{}
	left.Store(n)
	tb.DB = dynamodb.New(tb.DB.Options(), func(o *dynamodb.Options) {
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
	})
	return left
}

func TestAccountWritesRetryTransactionConflicts(t *testing.T) {
	t.Parallel()
	st, tb := newArea(t)
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{Via: ledger.ViaOperator})
	left := conflicting(tb, 2)
	c, admin, created, err := st.CreateCompany(ctx, tenancy.NewCompany{
		Name: "Acme", Admin: schema.User{Email: "a@acme.test", FirstName: "A", LastName: "B"}, APIKey: "csk_test-key-1",
	})
	if err != nil || !created {
		t.Fatalf("CreateCompany after 2 conflicts: %v", err)
	}
	left.Store(2)
	if _, err := st.CreateAPIKey(ctx, schema.APIKey{CompanyID: c.ID, UserID: admin.ID, Name: "k"}, "csk_test-key-2"); err != nil {
		t.Fatalf("CreateAPIKey after 2 conflicts: %v", err)
	}
	left.Store(2)
	u, err := st.CreateUser(ctx, schema.User{CompanyID: c.ID, Email: "b@acme.test", FirstName: "B", LastName: "C", IsAdmin: true, Active: true})
	if err != nil {
		t.Fatalf("CreateUser after 2 conflicts: %v", err)
	}
	left.Store(2)
	inactive := false
	if _, _, err := st.UpdateUser(ctx, c.ID, u.ID, tenancy.UserChange{Active: &inactive}); err != nil {
		t.Fatalf("UpdateUser after 2 conflicts: %v", err)
	}
	// The guard still holds after retries: the last admin stays.
	left.Store(2)
	if _, _, err := st.UpdateUser(ctx, c.ID, admin.ID, tenancy.UserChange{Active: &inactive}); !errors.Is(err, tenancy.ErrLastAdmin) {
		t.Fatalf("demoting the last admin: %v", err)
	}
	// Endless contention is an error, never a write.
	left.Store(100)
	if _, err := st.CreateAPIKey(ctx, schema.APIKey{CompanyID: c.ID, UserID: admin.ID, Name: "k"}, "csk_test-key-3"); err == nil {
		t.Fatal("CreateAPIKey succeeded through endless conflicts")
	}
	left.Store(0)
	if _, err := st.CredentialByAPIKey(context.Background(), "csk_test-key-3", time.Now()); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("the failed key authenticates: %v", err)
	}
	keysPage, err := st.ListAPIKeys(context.Background(), c.ID, 0, page.Request{Limit: 10})
	keys, total := keysPage.Items, keysPage.Count()
	if err != nil || total != 2 || len(keys) != 2 {
		t.Fatalf("keys %d of %d: %v", len(keys), total, err)
	}
}

func TestRateLimitWindows(t *testing.T) {
	t.Parallel()
	st, _ := newArea(t)
	ctx := context.Background()
	lim := tenancy.RateLimit{PerMinute: 2, PerHour: 3}
	t0 := time.Date(2026, 11, 22, 10, 0, 15, 0, time.UTC)
	key7 := tenancy.RateSubject(7, 1)
	take := func(subject string, at time.Time) tenancy.RateState {
		t.Helper()
		s, err := st.TakeRequest(ctx, 1, subject, lim, at)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := take(key7, t0); !s.Allowed || s.Limit != 2 || s.Remaining != 1 || s.Reset != 45*time.Second {
		t.Fatalf("first request: %+v", s)
	}
	if s := take(key7, t0); !s.Allowed || s.Remaining != 0 {
		t.Fatalf("second request: %+v", s)
	}
	if s := take(key7, t0); s.Allowed || s.Remaining != 0 || s.Reset != 45*time.Second {
		t.Fatalf("minute limit: %+v, want refused for 45s", s)
	}
	if s := take(tenancy.RateSubject(8, 1), t0); !s.Allowed {
		t.Fatal("another key of the same user has a budget of its own")
	}
	if s := take(tenancy.RateSubject(0, 1), t0); !s.Allowed {
		t.Fatal("the user's bearer tokens have a budget of their own")
	}
	// One left in the hour: the hour is now the window closest to exhaustion.
	if s := take(key7, t0.Add(time.Minute)); !s.Allowed || s.Limit != 3 || s.Remaining != 0 || s.Reset != 58*time.Minute+45*time.Second {
		t.Fatalf("a new minute allows again, the hour's last: %+v", s)
	}
	if s := take(key7, t0.Add(2*time.Minute)); s.Allowed || s.Reset != 57*time.Minute+45*time.Second {
		t.Fatalf("hour limit: %+v", s)
	}
	if err := st.RefundRequest(ctx, 1, key7, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if s := take(key7, t0.Add(2*time.Minute)); !s.Allowed || s.Remaining != 0 {
		t.Fatalf("a refunded request frees its place: %+v", s)
	}
	// A refund of nothing counted leaves the counters at zero.
	if err := st.RefundRequest(ctx, 1, tenancy.RateSubject(9, 1), t0); err != nil {
		t.Fatal(err)
	}
	if s := take(tenancy.RateSubject(9, 1), t0); !s.Allowed || s.Remaining != 1 {
		t.Fatalf("after a refund of nothing: %+v", s)
	}
	if s := take(key7, t0.Add(time.Hour)); !s.Allowed {
		t.Fatal("a new hour allows again")
	}
}

// A key is taken until its request answers; a kept answer is replayed
// until the key expires; a request that died frees its key when its lease
// runs out, and its late completion then fails instead of overwriting.
func TestIdempotencyKeyLifecycle(t *testing.T) {
	t.Parallel()
	st, _ := newArea(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	claim := func(subject, key, fp string, at time.Time) (*tenancy.IdempotencyClaim, *tenancy.IdempotencyRecord) {
		t.Helper()
		c, rec, err := st.ClaimIdempotencyKey(ctx, 1, subject, key, fp, at)
		if err != nil {
			t.Fatal(err)
		}
		if (c == nil) == (rec == nil) {
			t.Fatalf("claim %v record %v: want exactly one", c, rec)
		}
		return c, rec
	}
	first, _ := claim("key#1", "k", "fp1", t0)
	if _, rec := claim("key#1", "k", "fp1", t0.Add(time.Second)); rec == nil || rec.Done || rec.Fingerprint != "fp1" {
		t.Fatalf("while in progress: %+v", rec)
	}
	if c, _ := claim("key#2", "k", "fp1", t0); c == nil {
		t.Fatal("another credential's key of the same name is its own")
	}
	answer := schema.IdempotentAnswer{Status: 201, Header: map[string]string{"Content-Type": "application/json"}, Body: []byte(`{"id":1}`)}
	if err := st.CompleteIdempotencyKey(ctx, first, answer); err != nil {
		t.Fatal(err)
	}
	_, rec := claim("key#1", "k", "fp1", t0.Add(23*time.Hour))
	if rec == nil || !rec.Done || rec.Answer.Status != 201 || string(rec.Answer.Body) != `{"id":1}` || rec.Answer.Header["Content-Type"] != "application/json" {
		t.Fatalf("kept answer: %+v", rec)
	}
	if c, _ := claim("key#1", "k", "fp2", t0.Add(24*time.Hour+time.Second)); c == nil {
		t.Fatal("an expired key (not yet removed by TTL) is free again")
	}

	dead, _ := claim("key#1", "dies", "fp", t0)
	if _, rec := claim("key#1", "dies", "fp", t0.Add(4*time.Minute)); rec == nil {
		t.Fatal("within its lease the key stays taken")
	}
	taker, _ := claim("key#1", "dies", "fp", t0.Add(6*time.Minute))
	if taker == nil {
		t.Fatal("past its lease the key is free")
	}
	if err := st.CompleteIdempotencyKey(ctx, dead, answer); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("late completion of a lost claim: %v, want ErrConflict", err)
	}
	if err := st.ReleaseIdempotencyKey(ctx, dead); err != nil {
		t.Fatal(err)
	}
	if _, rec := claim("key#1", "dies", "fp", t0.Add(7*time.Minute)); rec == nil {
		t.Fatal("a lost claim's release must leave the new claim alone")
	}
	if err := st.ReleaseIdempotencyKey(ctx, taker); err != nil {
		t.Fatal(err)
	}
	if c, _ := claim("key#1", "dies", "fp", t0.Add(7*time.Minute)); c == nil {
		t.Fatal("a released key is free")
	}
}

// A user's host login is one member of the user's change: one
// transaction with the other members and one audit entry; a login another
// user of the company holds refuses the whole change (nothing written,
// nothing audited); moving it frees the old one; another company's user
// may hold the same login; a login not in lower case is refused.
func TestSCMLoginIsAMemberOfTheUserChange(t *testing.T) {
	t.Parallel()
	st, _ := newArea(t)
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{Via: ledger.ViaOperator})
	company := func(name string) (schema.Company, schema.User) {
		c, admin, _, err := st.CreateCompany(ctx, tenancy.NewCompany{Name: name, Admin: schema.User{Email: "a@" + name + ".test", FirstName: "A", LastName: "B"}, APIKey: "csk_test-" + name})
		if err != nil {
			t.Fatal(err)
		}
		return c, admin
	}
	acme, admin := company("acme")
	globex, theirs := company("globex")
	dev, err := st.CreateUser(ctx, schema.User{CompanyID: acme.ID, Email: "dev@acme.test", FirstName: "D", LastName: "E", Active: true})
	if err != nil {
		t.Fatal(err)
	}
	updates := func() []tenancy.AuditRecord {
		t.Helper()
		outPage, err := st.ListAudit(context.Background(), acme.ID, tenancy.AuditFilter{Action: "user.update"}, page.Request{Limit: 50})
		out := outPage.Items
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	login, perms := "octo", []string{"scans.upload_scan"}
	_, after, err := st.UpdateUser(ctx, acme.ID, dev.ID, tenancy.UserChange{SCMLogin: &login, Permissions: &perms})
	if err != nil || after.SCMLogin != "octo" || len(after.Permissions) != 1 {
		t.Fatalf("link with a permission: %+v %v", after, err)
	}
	if u := updates(); len(u) != 1 || u[0].Changes["scm_login"].After != "octo" || u[0].Changes["scm_login"].Before != nil || u[0].Changes["permissions"].After == nil {
		t.Fatalf("one change, one entry: %+v", u)
	}
	// Taken: the admin's change is refused whole.
	was, _ := st.GetUser(context.Background(), acme.ID, admin.ID)
	yes := true
	if _, _, err := st.UpdateUser(ctx, acme.ID, admin.ID, tenancy.UserChange{SCMLogin: &login, Permissions: &perms, Active: &yes}); !errors.Is(err, tenancy.ErrSCMLoginTaken) || !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("a taken login: %v", err)
	}
	if u, _ := st.GetUser(context.Background(), acme.ID, admin.ID); u.Revision != was.Revision || u.SCMLogin != "" || len(u.Permissions) != 0 {
		t.Fatalf("a refused change wrote %+v", u)
	}
	if users, err := st.ListUsers(context.Background(), acme.ID, tenancy.FacetPermission("scans.upload_scan"), page.Request{Limit: 10}); err != nil || users.Count() != 1 || len(users.Items) != 1 || users.Items[0].ID != dev.ID {
		t.Fatalf("the permission's list after a refused change: %+v %v", users, err)
	}
	if n := len(updates()); n != 1 {
		t.Fatalf("a refused change was audited: %d entries", n)
	}
	// Another company's user may hold it.
	if _, _, err := st.UpdateUser(ctx, globex.ID, theirs.ID, tenancy.UserChange{SCMLogin: &login}); err != nil {
		t.Fatalf("another company's user: %v", err)
	}
	// Moved: the old login is free for the admin.
	other := "octo-2"
	if _, _, err := st.UpdateUser(ctx, acme.ID, dev.ID, tenancy.UserChange{SCMLogin: &other}); err != nil {
		t.Fatal(err)
	}
	if _, after, err := st.UpdateUser(ctx, acme.ID, admin.ID, tenancy.UserChange{SCMLogin: &login}); err != nil || after.SCMLogin != "octo" {
		t.Fatalf("the freed login: %+v %v", after, err)
	}
	// The same login again writes nothing; upper case is refused.
	if _, _, err := st.UpdateUser(ctx, acme.ID, admin.ID, tenancy.UserChange{SCMLogin: &login}); err != nil {
		t.Fatal(err)
	}
	if n := len(updates()); n != 3 {
		t.Fatalf("link, move and link: %d entries", n)
	}
	upper := "Octo"
	if _, _, err := st.UpdateUser(ctx, acme.ID, dev.ID, tenancy.UserChange{SCMLogin: &upper}); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("upper case: %v", err)
	}
}
