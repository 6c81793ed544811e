// Package maildev installs (from the pinned npm package maildev) and runs a
// local SMTP catcher with a web inbox and a REST API, for the dev server and
// the tests: notification emails are really sent over SMTP and can be read
// in a browser or through GET /email.
package maildev

import (
	"context"
	"encoding/json"
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
const NPMPackage = "maildev@2.2.1"

// Environment variables that name a running catcher (set by withddb for
// the tests, read by testenv and the dev server).
const (
	EnvSMTP = "MAILDEV_SMTP" // host:port
	EnvWeb  = "MAILDEV_WEB"  // http://host:port
)

// script returns the maildev entry point under root/.local, installing the
// npm package there on first use.
func script(root string) (string, error) {
	prefix := filepath.Join(root, ".local", "npm")
	bin := filepath.Join(prefix, "node_modules", "maildev", "bin", "maildev")
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
		return "", fmt.Errorf("maildev not found after installing %s", NPMPackage)
	}
	return bin, nil
}

// Options of a catcher; zero ports pick free ones.
type Options struct {
	SMTPPort int
	WebPort  int
}

// Process is a running catcher.
type Process struct {
	SMTPAddr string // 127.0.0.1:port
	WebURL   string // http://127.0.0.1:port
	cmd      *exec.Cmd
}

// Start runs maildev on 127.0.0.1 (SMTP and web) and waits until it answers.
func Start(ctx context.Context, root string, o Options) (*Process, error) {
	bin, err := script(root)
	if err != nil {
		return nil, err
	}
	for _, p := range []*int{&o.SMTPPort, &o.WebPort} {
		if *p == 0 {
			if *p, err = freePort(); err != nil {
				return nil, err
			}
		}
	}
	cmd := exec.Command("node", bin, "--smtp", strconv.Itoa(o.SMTPPort), "--web", strconv.Itoa(o.WebPort),
		"--ip", "127.0.0.1", "--web-ip", "127.0.0.1", "--silent")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches us, we stop it
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	p := &Process{
		SMTPAddr: fmt.Sprintf("127.0.0.1:%d", o.SMTPPort),
		WebURL:   fmt.Sprintf("http://127.0.0.1:%d", o.WebPort),
		cmd:      cmd,
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start maildev: %w", err)
	}
	if err := p.wait(ctx, 30*time.Second); err != nil {
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
		if _, err := Inbox(ctx, p.WebURL); err == nil {
			if c, err := net.DialTimeout("tcp", p.SMTPAddr, time.Second); err == nil {
				c.Close()
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("maildev did not answer on %s within %s", p.WebURL, limit)
}

// Stop ends the process and waits for it.
func (p *Process) Stop() {
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

// Email is a received message as maildev's REST API describes it.
type Email struct {
	ID      string `json:"id"`
	Subject string `json:"subject"`
	Text    string `json:"text"`
	HTML    string `json:"html"`
	To      []struct {
		Address string `json:"address"`
	} `json:"to"`
	Headers map[string]any `json:"headers"`
}

// Inbox returns every message the catcher at web holds (GET /email).
func Inbox(ctx context.Context, web string) ([]Email, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, web+"/email", nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("maildev inbox: %s", res.Status)
	}
	var out []Email
	return out, json.NewDecoder(res.Body).Decode(&out)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
