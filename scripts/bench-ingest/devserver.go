package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/localproc"
	"github.com/acme/codescan-api/shared/maildev"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/store/scans"
)

// devPoll is how often the dev server's row asks GET /scan/{id} whether
// the scan is countable: every second, as a client would (and within the
// demo users' rate limit of 100 requests a minute), so its figure is up to
// a second late, half a second on average; the bench's own row looks at
// the table every 50 ms.
const devPoll = time.Second

// devServer is a dev server of the bench's own, started as `make run`
// starts it (scripts/devserver, built from this checkout): its own
// DynamoDB Local with its data on /dev/shm, S3 server, mail catcher,
// demo seed, stream pollers and jobs, on free loopback ports, its data in
// a temporary directory (DEVSERVER_DIR) instead of the checkout's .local,
// so a running `make run` is left alone.
type devServer struct {
	proc *localproc.Process
	base string // the API's base URL, base path included
	key  string // the demo's CI uploader's API key
	log  string // the dev server's standard error
}

// startDevServer builds and starts the dev server and waits until it
// answers (its demo seeded, some 40 s).
func startDevServer(ctx context.Context) (*devServer, error) {
	root, err := dynamolocal.Root()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bench-devserver-")
	if err != nil {
		return nil, err
	}
	d := &devServer{log: filepath.Join(dir, "devserver.log")}
	bin, local := filepath.Join(dir, "devserver"), filepath.Join(dir, "local")
	build := exec.Command("go", "build", "-o", bin, "./scripts/devserver")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("build the dev server: %w", err)
	}
	env, api, err := devServerEnv(local)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	// The dev server's output (its welcome, its JSON log) goes to a file,
	// shown if it fails: sh hands over to it, so it is the child that
	// localproc supervises and stops.
	newCmd := func() *exec.Cmd {
		cmd := exec.Command("sh", "-c", `exec "$0" 2>>"$1"`, bin, d.log)
		cmd.Dir, cmd.Env = root, env
		return cmd
	}
	ready := func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/dev/jwks.json", api), nil)
		if err != nil {
			return false
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		return res.Body.Close() == nil && res.StatusCode == http.StatusOK
	}
	cleanup := func() { removeDevData(dir, local) }
	if d.proc, err = localproc.Start(ctx, "the dev server", newCmd, 10*time.Minute, ready, cleanup); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, tail(d.log))
	}
	if d.base, d.key, err = demoUploader(filepath.Join(local, "demo.json")); err != nil {
		d.proc.Stop()
		return nil, err
	}
	return d, nil
}

// devServerEnv is the dev server's environment: this one without what
// withddb set (so it starts its own stand-ins, as `make run` does), with
// free ports and its data in local. It returns the API's port.
func devServerEnv(local string) ([]string, int, error) {
	drop := map[string]bool{"DYNAMODB_ENDPOINT": true, "TABLE_NAME": true, reportstore.EnvEndpoint: true,
		reportstore.EnvBucket: true, maildev.EnvSMTP: true, maildev.EnvWeb: true, "GOMEMLIMIT": true}
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !drop[name] {
			env = append(env, kv)
		}
	}
	api := 0
	for _, name := range []string{"PORT", "DYNAMODB_PORT", "S3_PORT", "SMTP_PORT", "MAIL_WEB_PORT"} {
		port, err := localproc.FreePort()
		if err != nil {
			return nil, 0, err
		}
		if name == "PORT" {
			api = port
		}
		env = append(env, name+"="+strconv.Itoa(port))
	}
	return append(env, "DEVSERVER_DIR="+local), api, nil
}

// removeDevData removes the dev server's directory and its table's data,
// which lives in /dev/shm where .local/dynamodb (here local/dynamodb)
// links to.
func removeDevData(dir, local string) {
	if target, err := os.Readlink(filepath.Join(local, "dynamodb")); err == nil && strings.HasPrefix(target, "/dev/shm/codescan-") {
		_ = os.RemoveAll(filepath.Dir(target))
	}
	_ = os.RemoveAll(dir)
}

// demoUploader reads the dev server's demo document: the API's base URL and
// the first company's CI uploader's API key.
func demoUploader(path string) (string, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	var doc struct {
		BaseURL   string `json:"base_url"`
		Companies []struct {
			Users []struct {
				Role   string `json:"role"`
				APIKey string `json:"api_key"`
			} `json:"users"`
		} `json:"companies"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return "", "", fmt.Errorf("%s: %w", path, err)
	}
	for _, c := range doc.Companies {
		for _, u := range c.Users {
			if u.Role == "ci-uploader" {
				return doc.BaseURL, u.APIKey, nil
			}
		}
	}
	return "", "", fmt.Errorf("%s names no ci-uploader", path)
}

// tail is the end of the file at path.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	return string(b[max(0, len(b)-4000):])
}

// overHTTP sends requests over the loopback.
func overHTTP(req *http.Request) (int, []byte, error) {
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// measure uploads body into a project of its own on the dev server, as a
// client does, and polls GET /scan/{id} until the scan is complete with
// its n findings counted; it returns when the upload was answered and when
// the scan was countable, in seconds after the upload began.
func (d *devServer) measure(ctx context.Context, project string, n int, body []byte) (answered, took float64, err error) {
	start := time.Now()
	scanID, _, err := uploadTo(d.base, overHTTP, d.key, project, n, body)
	if err != nil {
		return 0, 0, fmt.Errorf("dev server: %w", err)
	}
	answered = time.Since(start).Seconds()
	tick := time.NewTicker(devPoll)
	defer tick.Stop()
	deadline := time.After(15 * time.Minute)
	for {
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-deadline:
			return 0, 0, fmt.Errorf("dev server: scan %s of %d results not countable after 15 minutes", scanID, n)
		case <-tick.C:
		}
		done, err := d.countable(scanID, n)
		if err != nil {
			return 0, 0, err
		}
		if done {
			return answered, time.Since(start).Seconds(), nil
		}
	}
}

// countable asks the dev server whether the scan is complete with its n
// findings counted; a failed scan is an error.
func (d *devServer) countable(scanID string, n int) (bool, error) {
	req, err := http.NewRequest(http.MethodGet, d.base+"/scan/"+scanID, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set(auth.APIKeyHeader, d.key)
	code, body, err := overHTTP(req)
	if err != nil {
		return false, fmt.Errorf("dev server: GET /scan/%s: %w", scanID, err)
	}
	if code != http.StatusOK {
		return false, fmt.Errorf("dev server: GET /scan/%s: %d %s", scanID, code, body)
	}
	var sc struct {
		Status   string `json:"status"`
		Findings int    `json:"findings"`
	}
	if err := json.Unmarshal(body, &sc); err != nil {
		return false, fmt.Errorf("dev server: GET /scan/%s: %w", scanID, err)
	}
	if sc.Status == scans.ScanIncomplete {
		return false, fmt.Errorf("dev server: scan of %d results failed: %s", n, body)
	}
	return sc.Status == scans.ScanComplete && sc.Findings == n, nil
}

// warmUp uploads a report of 1,000 results to the dev server, unmeasured,
// as the bench's own row warms up.
func (d *devServer) warmUp(ctx context.Context) error {
	body, err := gzipSARIF(1000)
	if err != nil {
		return err
	}
	_, _, err = d.measure(ctx, "bench-dev-warm-up", 1000, body)
	return err
}

// devRow is a size uploaded both to the bench's handler and to the dev
// server, round by round.
type devRow struct {
	n      int
	rounds []round
}

// printDevRows prints, for each size uploaded to the dev server, its
// countable time beside the bench's for the same report in the same
// rounds, and their ratio.
func printDevRows(rows []devRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Println("\nThe same report uploaded to a dev server of the bench's own (scripts/devserver, started as `make run` starts it: its own")
	fmt.Println("DynamoDB Local with its data on /dev/shm, S3 server, mail catcher, demo seed, stream pollers and jobs) over HTTP, in the same")
	fmt.Printf("chunks, each round right after the bench's own upload above; countable = GET /scan/{id} complete with N findings, polled every %s.\n", devPoll)
	fmt.Println("Times are medians; the ratio is the median of the rounds' ratios (dev server / bench), and the rounds' ratios follow it.")
	fmt.Println("| N | bench countable s | dev server upload answered s | dev server countable s | ratio | rounds' ratios |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range rows {
		var ratios []string
		for _, x := range r.rounds {
			ratios = append(ratios, fmt.Sprintf("%.2f", x.dev/x.took))
		}
		fmt.Printf("| %d | %.1f | %.2f | %.1f | **%.2f** | %s |\n", r.n, median(r.rounds, func(x round) float64 { return x.took }),
			median(r.rounds, func(x round) float64 { return x.devAnswered }), median(r.rounds, func(x round) float64 { return x.dev }),
			median(r.rounds, func(x round) float64 { return x.dev / x.took }), strings.Join(ratios, " "))
	}
}
