// Command devserver runs the whole API locally: DynamoDB Local (data kept
// under .local/dynamodb), the table, the demo seed, .local/demo.json, a dev
// JWKS for bearer tokens, and every group's handler on one port.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/MicahParks/keyfunc/v3"

	"github.com/acme/codescan-api/functions/registry"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/demo"
	"github.com/acme/codescan-api/shared/devjwt"
	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/maildev"
	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/s3local"
	"github.com/acme/codescan-api/shared/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "devserver:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	root, err := dynamolocal.Root()
	if err != nil {
		return err
	}
	localDir := filepath.Join(root, ".local")
	if err := os.MkdirAll(localDir, 0o755); err != nil {
		return err
	}
	port := envOr("PORT", "3000")
	ddbPort, err := strconv.Atoi(envOr("DYNAMODB_PORT", "8000"))
	if err != nil {
		return fmt.Errorf("DYNAMODB_PORT: %w", err)
	}
	baseURL := "http://127.0.0.1:" + port

	env, err := config.FromEnv()
	if err != nil {
		return err
	}
	if env.DynamoEndpoint == "" {
		ddb, err := dynamolocal.Start(ctx, root, dynamolocal.Options{Port: ddbPort, DBPath: filepath.Join(localDir, "dynamodb")})
		if err != nil {
			return err
		}
		defer ddb.Stop()
		env.DynamoEndpoint = ddb.Endpoint
	}
	db, err := config.NewDynamoDB(ctx, env.DynamoEndpoint)
	if err != nil {
		return err
	}
	st := store.New(db, env.TableName)
	st.AuditRetention = env.AuditRetention
	if err := st.CreateTable(ctx, true); err != nil {
		return err
	}

	secret, err := loadOrCreateSecret(filepath.Join(localDir, "dev-secret"))
	if err != nil {
		return err
	}
	signer, err := devjwt.LoadOrCreateRSA(filepath.Join(localDir, "dev-jwt-key.pem"))
	if err != nil {
		return err
	}
	jwks, err := devjwt.JWKS(signer)
	if err != nil {
		return err
	}
	keys, err := keyfunc.NewJWKSetJSON(jwks)
	if err != nil {
		return err
	}
	issuer, audience := baseURL+"/dev", "codescan-api"

	doc, err := demo.Seed(ctx, st, secret)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	doc.BaseURL = baseURL + routes.BasePath
	doc.NotificationTypeCodes = notify.Codes()
	for _, c := range doc.Companies {
		for _, u := range c.Users {
			if u.BearerToken, err = signer.Mint(devjwt.Claims{Subject: u.Subject, Issuer: issuer, Audience: audience, TTL: 24 * time.Hour}); err != nil {
				return err
			}
		}
	}
	docPath := filepath.Join(localDir, "demo.json")
	if err := writeJSON(docPath, doc); err != nil {
		return err
	}

	mailbox, err := maildev.Start(ctx, root, maildev.Options{SMTPPort: 1025, WebPort: 1080})
	if err != nil {
		return err
	}
	defer mailbox.Stop()
	doc.MailInboxURL = mailbox.WebURL
	if err := writeJSON(docPath, doc); err != nil {
		return err
	}
	// Uploaded reports go to a local S3-compatible server (its data in
	// .local/s3, kept like the table's), where the ingester reads them.
	s3, err := s3local.Start(ctx, root, s3local.Options{Port: 4568, Dir: filepath.Join(localDir, "s3")})
	if err != nil {
		return err
	}
	defer s3.Stop()
	bucket, err := s3reports.New(ctx, s3local.Bucket, s3.Endpoint)
	if err != nil {
		return err
	}
	if err := startDelivery(ctx, st, env.DynamoEndpoint, mailbox.SMTPAddr, baseURL, bucket); err != nil {
		return err
	}

	deps := config.Deps{
		Server:  config.NewServer(env, st, auth.JWTConfig{Issuer: issuer, Audience: audience, Keys: keys.Keyfunc}),
		Store:   st,
		Reports: bucket,
	}
	mux := http.NewServeMux()
	mux.Handle(routes.BasePath+"/", registry.Mux(deps))
	mux.HandleFunc("GET /dev/jwks.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	})
	srv := &http.Server{
		Addr: "127.0.0.1:" + port, Handler: mux,
		// Set on purpose (README, "Input limits and errors"): a stalled
		// header or body is dropped within 10 s; a 5 MiB upload on a slow
		// link still fits in ReadTimeout's budget locally.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()

	printWelcome(doc, docPath)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(os.Stderr, "\nstopping API and DynamoDB Local")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func printWelcome(doc *demo.Document, docPath string) {
	c := doc.Companies[0]
	admin, member := c.UserByRole("admin"), c.UserByRole("member")
	fmt.Fprintf(os.Stderr, `
API ready at %[1]s   (demo data and credentials: %[2]s)

  curl -s %[1]s/openapi.json | head -c 300; echo
  curl -s -H 'SERVICE-TOKEN: %[3]s' %[1]s/notifications/preferences
  curl -s -X POST -H 'SERVICE-TOKEN: %[3]s' -d '{"email_enabled":true}' %[1]s/notifications/company-defaults/scan_completed
  curl -s -X POST -H 'Authorization: Bearer %[4]s' -d '{"email_enabled":false}' %[1]s/notifications/preferences/scan_completed
  curl -s -H 'SERVICE-TOKEN: %[5]s' -X POST -d '{}' %[1]s/notifications/company-defaults/scan_completed   # 403

Notifications: emails in the local inbox at %[6]s; webhooks of the demo
endpoint go to %[7]s (run any HTTP server there to watch them).
Uploaded reports: stored in the local S3-compatible server (s3rver) at
http://127.0.0.1:4568 and ingested by the worker on the table's stream;
poll GET /scan/{id} until it is complete.

Ctrl-C stops the API, the mail catcher, the S3 server and DynamoDB Local.
`, doc.BaseURL, docPath, admin.APIKey, member.BearerToken, member.APIKey, doc.MailInboxURL, demo.DemoWebhookURL)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

func loadOrCreateSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	b = make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return b, os.WriteFile(path, b, 0o600)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
