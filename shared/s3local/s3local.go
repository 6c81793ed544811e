// Package s3local installs (from the pinned npm package s3rver) and runs a
// local S3-compatible server for the dev server and the tests, with the
// report bucket created at start: uploads are really stored over the S3 API
// and read back by the ingester. Development only: no Lambda links it.
package s3local

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
)

// NPMPackage is the pinned npm package.
const NPMPackage = "s3rver@3.7.1"

// Bucket is the report bucket's name locally.
const Bucket = "codescan-reports"

// script returns the s3rver entry point under root/.local, installing the
// npm package there on first use.
func script(root string) (string, error) {
	prefix := filepath.Join(root, ".local", "npm")
	bin := filepath.Join(prefix, "node_modules", "s3rver", "bin", "s3rver.js")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", NPMPackage)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install %s: %w", NPMPackage, err)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("s3rver not found after installing %s", NPMPackage)
	}
	return bin, nil
}

// Options of a server.
type Options struct {
	Port int    // 0 picks a free one
	Dir  string // data directory; empty: a temporary one removed at Stop
}

// Process is a running server.
type Process struct {
	Endpoint string // http://127.0.0.1:port
	cmd      *exec.Cmd
	tmp      string
}

// Start runs s3rver on 127.0.0.1 with the report bucket and waits until it
// answers.
func Start(ctx context.Context, root string, o Options) (*Process, error) {
	bin, err := script(root)
	if err != nil {
		return nil, err
	}
	if o.Port == 0 {
		if o.Port, err = freePort(); err != nil {
			return nil, err
		}
	}
	p := &Process{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", o.Port)}
	if o.Dir == "" {
		if p.tmp, err = os.MkdirTemp("", "s3rver-"); err != nil {
			return nil, err
		}
		o.Dir = p.tmp
	} else if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	p.cmd = exec.Command("node", bin, "--directory", o.Dir, "--address", "127.0.0.1", "--port", strconv.Itoa(o.Port),
		"--silent", "--no-vhost-buckets", "--configure-bucket", Bucket)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches us, we stop it
	p.cmd.Stdout, p.cmd.Stderr = nil, os.Stderr
	if err := p.cmd.Start(); err != nil {
		p.cleanup()
		return nil, fmt.Errorf("start s3rver: %w", err)
	}
	if err := p.wait(ctx, 30*time.Second); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// wait polls the bucket until the server answers for it.
func (p *Process) wait(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, p.Endpoint+"/"+Bucket, nil)
		if err != nil {
			return err
		}
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			// Unsigned: 403 means the server runs and the bucket is there.
			if res.StatusCode == http.StatusOK || res.StatusCode == http.StatusForbidden {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("s3rver did not answer on %s within %s", p.Endpoint, limit)
}

// Stop ends the process, waits for it and removes a temporary data
// directory.
func (p *Process) Stop() {
	defer p.cleanup()
	if p.cmd == nil || p.cmd.Process == nil {
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

func (p *Process) cleanup() {
	if p.tmp != "" {
		_ = os.RemoveAll(p.tmp)
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
