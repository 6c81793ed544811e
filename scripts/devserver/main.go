// Command devserver runs the whole API locally: DynamoDB Local (data kept
// under .local/dynamodb), the mail catcher and the S3 server, each started
// again if it dies; the table, the demo seed, .local/demo.json, a dev JWKS
// for bearer tokens, and every group's handler on one port. Ports: PORT
// (3000), DYNAMODB_PORT (8000), S3_PORT (4568), SMTP_PORT (1025),
// MAIL_WEB_PORT (1080). DEVSERVER_DIR moves what .local holds (the
// table's data, demo.json, the dev keys, the stream checkpoints, the S3
// server's objects) elsewhere: `make bench` starts a dev server of its own
// in a temporary directory (scripts/bench-ingest).
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/demo"
	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/localproc"
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
	// `make run` runs this under `go run`: if that is killed, this stops
	// as on Ctrl-C instead of keeping the API and the stand-ins on their
	// ports. (The stand-ins die with this process however it ends.)
	if err := localproc.EndWithParent(syscall.SIGTERM); err != nil {
		return err
	}

	root, err := dynamolocal.Root()
	if err != nil {
		return err
	}
	var p ports
	for _, v := range []struct {
		name string
		def  int
		to   *int
	}{{"PORT", 3000, &p.API}, {"DYNAMODB_PORT", 8000, &p.DynamoDB}, {"S3_PORT", 4568, &p.S3},
		{"SMTP_PORT", 1025, &p.SMTP}, {"MAIL_WEB_PORT", 1080, &p.MailWeb}} {
		if *v.to, err = envPort(v.name, v.def); err != nil {
			return err
		}
	}
	env, err := config.FromEnv()
	if err != nil {
		return err
	}
	localDir := filepath.Join(root, ".local")
	if dir := os.Getenv(EnvDir); dir != "" {
		localDir = dir
	}
	s, err := startStack(ctx, root, localDir, p, env)
	if err != nil {
		return err
	}
	defer s.stop()
	srv := &http.Server{
		Addr: fmt.Sprintf("127.0.0.1:%d", p.API), Handler: s.handler,
		// Set on purpose (README, "Input limits and errors"): a stalled
		// header or body is dropped within 10 s; a 5 MiB upload on a slow
		// link still fits in ReadTimeout's budget locally.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	// Listening before "API ready" is printed: a client may start at once.
	l, err := net.Listen("tcp", srv.Addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()

	printWelcome(s.doc, s.docPath, s.s3.Endpoint)
	select {
	case err := <-errc:
		return err
	case err := <-s.failed:
		_ = srv.Close()
		return fmt.Errorf("%w; stopping (run make run again, or make reset if its data is damaged)", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(os.Stderr, "\nstopping the API, the mail catcher, the S3 server and DynamoDB Local")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// EnvDir names the directory of the dev server's data and keys instead of
// the checkout's .local.
const EnvDir = "DEVSERVER_DIR"

func printWelcome(doc *demo.Document, docPath, s3Endpoint string) {
	c := doc.Companies[0]
	admin, member := c.UserByRole("admin"), c.UserByRole("member")
	fmt.Fprintf(os.Stderr, `
API ready at %[1]s   (demo data and credentials: %[2]s)

  curl -s %[1]s/openapi.json | head -c 300; echo
  curl -s -H 'SERVICE-TOKEN: %[3]s' %[1]s/notifications/preferences
  curl -s -X POST -H 'SERVICE-TOKEN: %[3]s' -d '{"email_enabled":true}' %[1]s/notifications/company-defaults/scan_completed
  curl -s -X POST -H 'Authorization: Bearer %[4]s' -d '{"email_enabled":false}' %[1]s/notifications/preferences/scan_completed
  curl -s -H 'SERVICE-TOKEN: %[5]s' -X POST -d '{}' %[1]s/notifications/company-defaults/scan_completed   # 403
  curl -s -H 'SERVICE-TOKEN: %[3]s' '%[1]s/metrics/trend?days=60' | jq '.series[-1]'

The HTML report of the demo's latest scan, with the project's 90-day trend
chart (six weeks of seeded history), time to fix and SLA compliance:
  curl -s -H 'SERVICE-TOKEN: %[3]s' %[1]s/scan/%[9]s/report > report.html   # then open report.html

Notifications: emails in the local inbox at %[6]s; webhooks of the demo
endpoint go to %[7]s (run any HTTP server there to watch them).

Pull requests (docs/pull-requests.md): a scan whose CI metadata names one
(POST /ci-data-upload with GITHUB_REF=refs/pull/N/merge, GITHUB_REPOSITORY,
GITHUB_BASE_REF, GITHUB_SERVER_URL) is decorated through the integration that
matches its host: point one at a GitHub-compatible host on loopback with
  PATCH /integrations/scm-provider/{uuid} {"base_url":"http://127.0.0.1:PORT","secure_token":"..."}
(loopback hosts are allowed here). To watch a whole decoration against a
loopback GitHub that checks every request against GitHub's API description:
  go run ./scripts/withddb go test -count=1 -v -run TestDecoratesThePullRequest ./shared/prdecor
GitLab merge requests (CI_MERGE_REQUEST_IID, CI_PROJECT_PATH, CI_COMMIT_SHA,
CI_SERVER_URL) go through an integration with {"provider":"gitlab"}; against a
loopback GitLab checked with GitLab's OpenAPI description:
  go run ./scripts/withddb go test -count=1 -v -run TestDecoratesTheMergeRequest ./shared/prdecor
Uploaded reports: stored in the local S3-compatible server (versitygw,
every request signed) at %[8]s and ingested by the worker on the table's stream;
poll GET /scan/{id} until it is complete.

DynamoDB Local, the mail catcher and the S3 server are started again on
their ports if they die (a request meanwhile answers 503 with Retry-After).
Ctrl-C stops the API, the mail catcher, the S3 server and DynamoDB Local.
`, doc.BaseURL, docPath, admin.APIKey, member.BearerToken, member.APIKey, doc.MailInboxURL, demo.DemoWebhookURL, s3Endpoint, c.FirstResource("scan_ids"))
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

// envPort is the port the variable name sets, else def.
func envPort(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("%s=%q is not a port", name, v)
	}
	return n, nil
}
