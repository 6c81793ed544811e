package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/demo"
	"github.com/acme/codescan-api/shared/devjwt"
	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/localproc"
	"github.com/acme/codescan-api/shared/maildev"
	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/s3local"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
)

// ports of the stack; 0 picks a free one.
type ports struct {
	API, DynamoDB, S3, SMTP, MailWeb int
}

// stack is the API with its stand-ins, demo data and delivery running.
type stack struct {
	baseURL string
	handler http.Handler
	doc     *demo.Document
	docPath string
	store   *store.Store
	s3      *s3local.Process
	// failed receives the error of a stand-in that died and could not be
	// started again.
	failed chan error
	stops  []func()
}

// startStack starts DynamoDB Local (unless env names a table endpoint), the
// mail catcher and the S3 server, each supervised (started again on its
// port, with its data, when it dies), the table with the demo seed, the
// stream pollers and jobs, and the API's handler; data and keys live in
// localDir. It runs until ctx ends; stop then waits for the stand-ins.
func startStack(ctx context.Context, root, localDir string, p ports, env config.Env) (st *stack, err error) {
	s := &stack{baseURL: fmt.Sprintf("http://127.0.0.1:%d", p.API), failed: make(chan error, 3)}
	defer func() {
		if err != nil {
			s.stop()
		}
	}()
	if err := os.MkdirAll(localDir, 0o755); err != nil {
		return nil, err
	}
	if env.DynamoEndpoint == "" {
		if env.DynamoEndpoint, err = s.startDynamoDB(ctx, root, localDir, p.DynamoDB); err != nil {
			return nil, err
		}
	}
	mailbox, err := maildev.Start(ctx, root, maildev.Options{SMTPPort: p.SMTP, WebPort: p.MailWeb})
	if err != nil {
		return nil, err
	}
	s.supervise(ctx, mailbox.Process)
	bucket, err := s.startS3(ctx, root, localDir, p.S3)
	if err != nil {
		return nil, err
	}
	db, fresh, err := s.openTable(ctx, env)
	if err != nil {
		return nil, err
	}
	a, err := loadDevAuth(localDir, s.baseURL)
	if err != nil {
		return nil, err
	}
	if err := s.seedDemo(ctx, a); err != nil {
		return nil, err
	}
	if err := s.goLive(ctx, db, env, fresh, mailbox, localDir, bucket); err != nil {
		return nil, err
	}
	s.handler = s.routes(env, bucket, a)
	return s, nil
}

// startDynamoDB starts DynamoDB Local, supervised, on port with its data
// under localDir, and returns its endpoint.
func (s *stack) startDynamoDB(ctx context.Context, root, localDir string, port int) (string, error) {
	dir, err := dynamoDir(localDir)
	if err != nil {
		return "", err
	}
	ddb, err := dynamolocal.Start(ctx, root, dynamolocal.Options{Port: port, DBPath: dir})
	if err != nil {
		return "", err
	}
	s.supervise(ctx, ddb.Process)
	return ddb.Endpoint, nil
}

// startS3 starts the local S3-compatible server, supervised, and returns
// the reports bucket on it. Uploaded reports go there (its data in
// localDir/s3, kept like the table's), where the ingester reads them.
func (s *stack) startS3(ctx context.Context, root, localDir string, port int) (*s3reports.Store, error) {
	var err error
	if s.s3, err = s3local.Start(ctx, root, s3local.Options{Port: port, Dir: filepath.Join(localDir, "s3")}); err != nil {
		return nil, err
	}
	s.supervise(ctx, s.s3.Process)
	return s3reports.New(ctx, s3local.Bucket, s.s3.Endpoint)
}

// openTable opens the stack's store on env's table, creating the table
// (without its stream) when missing; fresh says it was.
func (s *stack) openTable(ctx context.Context, env config.Env) (db *dynamodb.Client, fresh bool, err error) {
	if db, err = config.NewDynamoDB(ctx, env.DynamoEndpoint); err != nil {
		return nil, false, err
	}
	s.store = store.New(db, env.TableName, store.WithAuditRetention(env.AuditRetention))
	if fresh, err = tableMissing(ctx, db, env.TableName); err != nil {
		return nil, false, err
	}
	// The table's stream is switched on only after the demo seed: the
	// seed's history (hundreds of events of scans and triage "months ago")
	// is data to browse, not news to deliver, and stays off the stream
	// the pollers read.
	if err := bulkload.CreateTable(ctx, s.store, false); err != nil {
		return nil, false, err
	}
	// A data directory written before the issues' index keys gets them
	// before anything is served: the issue lists read those indexes
	// without asking (issuelists.BackfillDueIndex).
	for done := false; !done; {
		if done, _, err = s.store.Lists.BackfillDueIndex(ctx, time.Now().Add(time.Minute)); err != nil {
			return nil, false, fmt.Errorf("index keys backfill: %w", err)
		}
	}
	// And the projects' lower-cased URL, which the projects list's repo_url
	// filter matches (catalog.BackfillProjectRepoKeys).
	for done := false; !done; {
		if done, _, err = s.store.Catalog.BackfillProjectRepoKeys(ctx, time.Now().Add(time.Minute)); err != nil {
			return nil, false, fmt.Errorf("project URL backfill: %w", err)
		}
	}
	return db, fresh, nil
}

// devAuth is the dev server's own sign-in: the demo's secret, the key that
// mints the users' bearer tokens and the key set that checks them.
type devAuth struct {
	secret           []byte
	signer           *devjwt.Signer
	jwks             []byte
	keys             keyfunc.Keyfunc
	issuer, audience string
}

// loadDevAuth loads (or creates, the first time) the secret and the
// signing key kept in localDir.
func loadDevAuth(localDir, baseURL string) (devAuth, error) {
	var a devAuth
	var err error
	if a.secret, err = loadOrCreateSecret(filepath.Join(localDir, "dev-secret")); err != nil {
		return devAuth{}, err
	}
	if a.signer, err = devjwt.LoadOrCreateRSA(filepath.Join(localDir, "dev-jwt-key.pem")); err != nil {
		return devAuth{}, err
	}
	if a.jwks, err = devjwt.JWKS(a.signer); err != nil {
		return devAuth{}, err
	}
	if a.keys, err = keyfunc.NewJWKSetJSON(a.jwks); err != nil {
		return devAuth{}, err
	}
	a.issuer, a.audience = baseURL+"/dev", "codescan-api"
	return a, nil
}

// seedDemo seeds the demo data and gives each of its users a bearer token.
func (s *stack) seedDemo(ctx context.Context, a devAuth) error {
	var err error
	if s.doc, err = demo.Seed(ctx, s.store, a.secret); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	s.doc.BaseURL = s.baseURL + routes.BasePath
	s.doc.NotificationTypeCodes = notify.Codes()
	for _, c := range s.doc.Companies {
		for _, u := range c.Users {
			if u.BearerToken, err = a.signer.Mint(devjwt.Claims{Subject: u.Subject, Issuer: a.issuer, Audience: a.audience, TTL: 24 * time.Hour}); err != nil {
				return err
			}
		}
	}
	return nil
}

// goLive makes the seeded stack deliver: it builds the dispatcher, records
// a fresh table's SLA history, switches the stream on, writes the demo
// document and starts the pollers and jobs.
func (s *stack) goLive(ctx context.Context, db *dynamodb.Client, env config.Env, fresh bool, mailbox *maildev.Process, localDir string, bucket *s3reports.Store) error {
	d, err := newDispatcher(ctx, s.store, mailbox.SMTPAddr, s.baseURL, env.LogLevel)
	if err != nil {
		return err
	}
	if fresh {
		// The SLA breaches of the seeded issues are history too: recorded
		// now, the SLA job finds them raised and sends nothing for them.
		if _, err := scheduler.SLAChecks(ctx, scheduler.StoreOf(s.store), time.Now()); err != nil {
			return fmt.Errorf("seed: SLA history: %w", err)
		}
	}
	if err := enableStream(ctx, db, env.TableName); err != nil {
		return err
	}
	s.doc.MailInboxURL = mailbox.WebURL
	s.docPath = filepath.Join(localDir, "demo.json")
	if err := writeJSON(s.docPath, s.doc); err != nil {
		return err
	}
	return startDelivery(ctx, d, s.store, env.DynamoEndpoint, localDir, bucket)
}

// routes is the stack's handler: the API under its base path and the dev
// key set its tokens are checked against.
func (s *stack) routes(env config.Env, bucket *s3reports.Store, a devAuth) http.Handler {
	deps := config.Deps{
		Server:  config.NewServer(env, s.store, auth.JWTConfig{Issuer: a.issuer, Audience: a.audience, Keys: a.keys.Keyfunc}),
		Store:   s.store,
		Reports: bucket,
		Exports: bucket,
	}
	mux := http.NewServeMux()
	mux.Handle(routes.BasePath+"/", registry.Mux(deps))
	mux.HandleFunc("GET /dev/jwks.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(a.jwks)
	})
	return mux
}

// supervise restarts p when it dies, until ctx ends, and reports on
// s.failed when it cannot.
func (s *stack) supervise(ctx context.Context, p *localproc.Process) {
	s.stops = append(s.stops, p.Stop)
	gaveUp := p.Supervise(ctx, func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "devserver: "+format+"\n", args...)
	})
	go func() {
		if err, ok := <-gaveUp; ok {
			s.failed <- err
		}
	}()
}

// stop ends the stand-ins, last started first.
func (s *stack) stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

// tableMissing reports whether the table is still to be made (a fresh
// .local, or after make reset).
func tableMissing(ctx context.Context, db *dynamodb.Client, table string) (bool, error) {
	_, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var missing *types.ResourceNotFoundException
	if errors.As(err, &missing) {
		return true, nil
	}
	return false, err
}

// enableStream switches the table's stream on (new images, as
// store.CreateTable makes it in AWS) unless it is on.
func enableStream(ctx context.Context, db *dynamodb.Client, table string) error {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return err
	}
	if spec := out.Table.StreamSpecification; spec != nil && aws.ToBool(spec.StreamEnabled) {
		return nil
	}
	_, err = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(table),
		StreamSpecification: store.StreamSpec()})
	if err != nil {
		return fmt.Errorf("enable the stream of %s: %w", table, err)
	}
	return nil
}
