package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/localproc"
	"github.com/acme/codescan-api/shared/s3local"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// The S3 server of a running stack is killed while it cannot come back
// (its data directory replaced by a file): an upload meanwhile answers
// 503 with Retry-After. Once the directory is back the supervisor has
// started it again on its port, with the objects stored before, and an
// upload is stored and ingested. Killed again and kept from coming back,
// the stack reports that it gave up.
func TestStackSurvivesS3Death(t *testing.T) {
	root, err := dynamolocal.Root()
	if err != nil {
		t.Fatal(err)
	}
	env, err := config.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	// DynamoDB Local of `withddb` when it runs, else one of its own.
	env.TableName = fmt.Sprintf("devserver_%d", time.Now().UnixNano())
	env.RateLimit = tenancy.RateLimit{}
	t.Setenv(EnvOnDisk, "1") // nothing of the test left in /dev/shm
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	local := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := startStack(ctx, root, local, ports{API: l.Addr().(*net.TCPAddr).Port}, env)
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	srv := &http.Server{Handler: s.handler}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	key := s.doc.Companies[0].UserByRole("ci-uploader").APIKey
	report, err := os.ReadFile(filepath.Join(root, "functions", "uploads", "testdata", "semgrep.sarif"))
	if err != nil {
		t.Fatal(err)
	}
	upload := func() (int, http.Header, []byte) {
		t.Helper()
		url := s.doc.BaseURL + "/scan-upload?engine=sarif&project=restarts&branch=main&run_id=" + uuid.NewString()
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(report))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(auth.APIKeyHeader, key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, res.Header, body
	}
	scanOf := func(body []byte) string {
		t.Helper()
		var out struct {
			ScanID string `json:"sast_scan_id"`
		}
		if err := json.Unmarshal(body, &out); err != nil || out.ScanID == "" {
			t.Fatalf("upload answered %s", body)
		}
		return out.ScanID
	}
	status, _, body := upload()
	if status != http.StatusOK {
		t.Fatalf("upload before the outage: %d %s", status, body)
	}
	before := scanOf(body)
	s3Dir := filepath.Join(local, "s3")
	block := func() {
		t.Helper()
		if err := os.Rename(s3Dir, s3Dir+".aside"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s3Dir, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.s3.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	pid, back := s.s3.Pid(), s.s3.NextUp() // taken before the kill: the restart cannot slip past it
	block()
	status, header, body := upload()
	if status != http.StatusServiceUnavailable || header.Get("Retry-After") == "" || !json.Valid(body) {
		t.Fatalf("upload during the outage: %d Retry-After %q %s, want 503 with Retry-After", status, header.Get("Retry-After"), body)
	}
	if err := os.Remove(s3Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(s3Dir+".aside", s3Dir); err != nil {
		t.Fatal(err)
	}
	select {
	case <-back:
	case <-time.After(2 * time.Minute):
		t.Fatal("no S3 server back within two minutes")
	}
	if s.s3.Pid() == pid || !answers(s.s3.Endpoint) {
		t.Fatalf("the S3 server came back as %d (killed: %d) and answers: %v", s.s3.Pid(), pid, answers(s.s3.Endpoint))
	}
	for _, id := range []string{before, ""} {
		if id == "" {
			status, _, body := upload()
			if status != http.StatusOK {
				t.Fatalf("upload after the restart: %d %s", status, body)
			}
			id = scanOf(body)
		}
		waitFor(t, "scan "+id+" ingested", func() bool { return scanStatus(t, s, key, id) == scans.ScanComplete })
	}

	block()
	select {
	case err := <-s.failed:
		if !errors.Is(err, localproc.ErrGaveUp) || !bytes.Contains([]byte(err.Error()), []byte("S3 server")) {
			t.Fatalf("the stack gave up with %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the stack did not give up on an S3 server that cannot start")
	}
}

// answers reports whether the S3 server at endpoint answers for the bucket.
func answers(endpoint string) bool {
	res, err := http.Head(endpoint + "/" + s3local.Bucket)
	if err != nil {
		return false
	}
	res.Body.Close()
	return true
}

func scanStatus(t *testing.T, s *stack, key, id string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.doc.BaseURL+"/scan/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(auth.APIKeyHeader, key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Status string `json:"status"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&out) != nil {
		t.Fatalf("GET /scan/%s: %s", id, res.Status)
	}
	return out.Status
}

// waitFor checks cond on every tick until it holds or two minutes pass.
// Only the ingestion of a scan is waited for so: it is the stack's stream
// poller, in this process, writing the table, and the stack offers no
// signal of it (its pollers set no localstream.Poller.Caught); the S3
// server's restart is awaited on NextUp.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("no %s within two minutes", what)
		case <-tick.C:
		}
	}
}
