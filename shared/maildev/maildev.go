// Package maildev installs (the npm package maildev, pinned in
// shared/localproc/npm) and runs a
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
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/acme/codescan-api/shared/localproc"
)

// Environment variables that name a running catcher (set by withddb for
// the tests, read by testenv and the dev server).
const (
	EnvSMTP = "MAILDEV_SMTP" // host:port
	EnvWeb  = "MAILDEV_WEB"  // http://host:port
)

// Options of a catcher; zero ports pick free ones.
type Options struct {
	SMTPPort int
	WebPort  int
}

// Process is a running catcher.
type Process struct {
	SMTPAddr string // 127.0.0.1:port
	WebURL   string // http://127.0.0.1:port
	*localproc.Process
}

// Start runs maildev on 127.0.0.1 (SMTP and web), installing the npm tools
// under root/.local on first use, and waits until both answer. Started
// again (Supervise), it keeps its ports (its inbox is in memory).
func Start(ctx context.Context, root string, o Options) (*Process, error) {
	bin, err := localproc.NPMFile(root, filepath.Join("maildev", "bin", "maildev"))
	if err != nil {
		return nil, err
	}
	for _, port := range []*int{&o.SMTPPort, &o.WebPort} {
		if *port == 0 {
			if *port, err = localproc.FreePort(); err != nil {
				return nil, err
			}
		}
	}
	cmd := func() *exec.Cmd {
		return exec.Command("node", bin, "--smtp", strconv.Itoa(o.SMTPPort), "--web", strconv.Itoa(o.WebPort),
			"--ip", "127.0.0.1", "--web-ip", "127.0.0.1", "--silent")
	}
	p := &Process{SMTPAddr: fmt.Sprintf("127.0.0.1:%d", o.SMTPPort), WebURL: fmt.Sprintf("http://127.0.0.1:%d", o.WebPort)}
	p.Process, err = localproc.Start(ctx, "maildev on "+p.WebURL, cmd, 30*time.Second, func(ctx context.Context) bool {
		if _, err := Inbox(ctx, p.WebURL); err != nil {
			return false
		}
		c, err := net.DialTimeout("tcp", p.SMTPAddr, time.Second)
		if err != nil {
			return false
		}
		return c.Close() == nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return p, nil
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
