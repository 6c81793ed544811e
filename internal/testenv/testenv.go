// Package testenv gives tests a real DynamoDB Local table, companies and
// users with credentials, and a client that checks every response against
// the OpenAPI document. It is imported only by tests.
package testenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/keyfunc/v3"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/devjwt"
	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/maildev"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/schema"
)

// JWT settings every test Env trusts.
const (
	Issuer   = "https://issuer.test/"
	Audience = "codescan-api-test"
)

var (
	endpoint string
	local    *dynamolocal.Process
	tableSeq atomic.Int64
)

// Main runs a package's tests against DynamoDB Local: the one named by
// DYNAMODB_ENDPOINT (make test starts one for all packages), or one started
// here for this test binary. Call it from TestMain.
func Main(m *testing.M) { run(m, os.Getenv("DYNAMODB_ENDPOINT")) }

// MainOwnDynamoDB is Main on a DynamoDB Local of this test binary's own,
// even under make test: for packages whose tables have streams, which
// DynamoDB Local keeps every record of, slowing down every table it serves
// as they pile up; the shared instance stays without them.
func MainOwnDynamoDB(m *testing.M) { run(m, "") }

func run(m *testing.M, shared string) {
	endpoint = shared
	if endpoint == "" {
		root, err := dynamolocal.Root()
		if err == nil {
			local, err = dynamolocal.Start(context.Background(), root, dynamolocal.Options{})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "testenv: DynamoDB Local:", err)
			os.Exit(1)
		}
		endpoint = local.Endpoint
	}
	code := m.Run()
	if local != nil {
		local.Stop()
	}
	if mailProc != nil {
		mailProc.Stop()
	}
	if s3Proc != nil {
		s3Proc.Stop()
	}
	os.Exit(code)
}

var (
	mailOnce sync.Once
	mailProc *maildev.Process
	mailSMTP string
	mailWeb  string
	mailErr  error
)

// Mail returns the SMTP address and web URL of the local mail catcher: the
// one named by MAILDEV_SMTP and MAILDEV_WEB (make test starts one for all
// packages), or one started for this test binary on first use.
func Mail(t testing.TB) (smtpAddr, webURL string) {
	t.Helper()
	mailOnce.Do(func() {
		mailSMTP, mailWeb = os.Getenv(maildev.EnvSMTP), os.Getenv(maildev.EnvWeb)
		if mailSMTP != "" && mailWeb != "" {
			return
		}
		root, err := dynamolocal.Root()
		if err != nil {
			mailErr = err
			return
		}
		mailProc, mailErr = maildev.Start(context.Background(), root, maildev.Options{})
		if mailErr == nil {
			mailSMTP, mailWeb = mailProc.SMTPAddr, mailProc.WebURL
		}
	})
	if mailErr != nil {
		t.Fatalf("testenv: maildev: %v", mailErr)
	}
	return mailSMTP, mailWeb
}

// NewStore returns a store on a fresh table of its own.
func NewStore(t testing.TB) *store.Store {
	t.Helper()
	return newStore(t, false)
}

// NewStreamStore is NewStore with the table's stream on, for tests that read
// it (the dispatcher's poller); the others go without, because DynamoDB
// Local slows down for every table as stream records pile up.
func NewStreamStore(t testing.TB) *store.Store {
	t.Helper()
	return newStore(t, true)
}

func newStore(t testing.TB, stream bool) *store.Store {
	t.Helper()
	if endpoint == "" {
		t.Fatal("testenv: call testenv.Main from TestMain")
	}
	db, err := config.NewDynamoDB(context.Background(), endpoint)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("t%d_%d_%d", os.Getpid(), time.Now().UnixNano(), tableSeq.Add(1))
	st := store.New(db, name)
	if err := bulkload.CreateTable(context.Background(), st, stream); err != nil {
		t.Fatal(err)
	}
	return st
}

var (
	keysOnce sync.Once
	rsaKey   *devjwt.Signer
	ecKey    *devjwt.Signer
	jwks     []byte
)

func signers(t testing.TB) (*devjwt.Signer, *devjwt.Signer, []byte) {
	keysOnce.Do(func() {
		rk, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		rsaKey, _ = devjwt.NewSigner(rk, "test-rsa")
		ecKey, _ = devjwt.NewSigner(ek, "test-ec")
		jwks, err = devjwt.JWKS(rsaKey, ecKey)
		if err != nil {
			panic(err)
		}
	})
	return rsaKey, ecKey, jwks
}

// Env is one test's world: a table, deps for group constructors, and
// signing keys trusted by its authenticator.
type Env struct {
	Store *store.Store
	Deps  config.Deps
	RSA   *devjwt.Signer // RS256 key in the trusted JWKS
	EC    *devjwt.Signer // ES256 key in the trusted JWKS
	Logs  *strings.Builder
	// writes signals the store's writes once WatchWrites (or
	// StartIngester) set it up.
	writes *Writes
}

// New returns a fresh Env. Request logs go to Env.Logs so tests can check
// what is (and is not) logged.
func New(t testing.TB) *Env {
	t.Helper()
	return newEnv(t, NewStore(t))
}

// NewStreaming is New on a table with its stream on (see NewStreamStore).
func NewStreaming(t testing.TB) *Env {
	t.Helper()
	return newEnv(t, NewStreamStore(t))
}

func newEnv(t testing.TB, st *store.Store) *Env {
	t.Helper()
	rk, ek, set := signers(t)
	k, err := keyfunc.NewJWKSetJSON(set)
	if err != nil {
		t.Fatal(err)
	}
	logs := &strings.Builder{}
	log := slog.New(slog.NewJSONHandler(&lockedWriter{w: logs}, nil))
	authn := auth.New(st.Tenancy, auth.JWTConfig{Issuer: Issuer, Audience: Audience, Keys: k.Keyfunc})
	return &Env{
		Store: st,
		Deps:  config.Deps{Server: &httpapi.Server{Auth: authn, Log: log, Store: st.Tenancy}, Store: st, Reports: lazyReports{t}, Exports: lazyReports{t}},
		RSA:   rk, EC: ek, Logs: logs,
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// User is a stored user with its API key.
type User struct {
	schema.User
	APIKey string
}

// Company is a stored company with an admin.
type Company struct {
	schema.Company
	Admin User
}

// Company creates a company with an active admin user.
func (e *Env) Company(t testing.TB, name string) *Company {
	t.Helper()
	ctx := context.Background()
	id, err := e.Store.Ledger.NextID(ctx, "company")
	if err != nil {
		t.Fatal(err)
	}
	c := schema.Company{ID: id, Name: name}
	if err := bulkload.PutCompany(ctx, e.Store, c); err != nil {
		t.Fatal(err)
	}
	co := &Company{Company: c}
	co.Admin = e.User(t, co, UserSpec{Email: "admin@" + strings.ToLower(name) + ".test", IsAdmin: true})
	return co
}

// UserSpec describes a user to create.
type UserSpec struct {
	Email       string
	Permissions []string
	IsAdmin     bool
	Inactive    bool
}

// User creates a user of c with an API key and a token subject.
func (e *Env) User(t testing.TB, c *Company, spec UserSpec) User {
	t.Helper()
	ctx := context.Background()
	id, err := e.Store.Tenancy.NextUserID(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(spec.Email, "@")
	u := schema.User{
		ID: id, CompanyID: c.ID, Email: spec.Email, FirstName: first, LastName: "Tester",
		Permissions: spec.Permissions, IsAdmin: spec.IsAdmin, Active: !spec.Inactive,
		Subject: fmt.Sprintf("test|%d|%d", c.ID, id),
	}
	if err := bulkload.PutUser(ctx, e.Store, u); err != nil {
		t.Fatal(err)
	}
	key := auth.NewAPIKey()
	if err := bulkload.PutAPIKey(ctx, e.Store, c.ID, id, key); err != nil {
		t.Fatal(err)
	}
	return User{User: u, APIKey: key}
}

// Token mints a valid RS256 bearer token for u.
func (e *Env) Token(t testing.TB, u User) string {
	t.Helper()
	tok, err := e.RSA.Mint(devjwt.Claims{Subject: u.Subject, Issuer: Issuer, Audience: Audience, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Endpoint is the DynamoDB Local endpoint the tests use (for clients beyond
// the store, such as the Streams API).
func Endpoint() string { return endpoint }
