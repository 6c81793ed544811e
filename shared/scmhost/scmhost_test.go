package scmhost_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/scmhost/scmhosttest"
)

const token = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngOnly00000"

func TestNormalizeBaseURL(t *testing.T) {
	strict := scmhost.New(scmhost.Options{})
	dev := scmhost.New(scmhost.Options{AllowLoopback: true})
	cases := []struct {
		in, want   string
		allowedDev bool // accepted only with loopback allowed
	}{
		{"https://api.github.com", "https://api.github.com", false},
		{"https://GHE.Example.com/", "https://ghe.example.com", false},
		{"https://ghe.example.com:8443/github//", "https://ghe.example.com:8443/github", false},
		{"https://[2606:50c0:8000::154]", "https://[2606:50c0:8000::154]", false},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"http://localhost:8080/", "http://localhost:8080", true},
	}
	for _, c := range cases {
		got, err := dev.NormalizeBaseURL(c.in)
		if err != nil || got != c.want {
			t.Errorf("dev %q: %q %v", c.in, got, err)
		}
		got, err = strict.NormalizeBaseURL(c.in)
		if c.allowedDev {
			var inv *scmhost.InvalidError
			if !errors.As(err, &inv) {
				t.Errorf("strict accepted %q: %q", c.in, got)
			}
		} else if err != nil || got != c.want {
			t.Errorf("strict %q: %q %v", c.in, got, err)
		}
	}
	bad := []string{
		"", "api.github.com", "/api/v3", "ftp://example.com", "https://", "https:///path",
		"https://user:pass@example.com", "https://example.com/?q=1", "https://example.com/#x",
		"https://example.com?", "mailto:a@example.com", "https://10.1.2.3", "https://169.254.169.254/latest",
		"https://[fd00:ec2::254]", "https://[::ffff:192.168.0.1]", "https://127.0.0.1", "http://api.github.com",
		"https://example.com/" + strings.Repeat("a", scmhost.MaxBaseURLLength),
	}
	for _, in := range bad {
		if got, err := strict.NormalizeBaseURL(in); err == nil {
			t.Errorf("strict accepted %q as %q", in, got)
		}
	}
	// Loopback permission never opens private ranges.
	for _, in := range []string{"http://10.1.2.3", "http://169.254.169.254", "https://192.168.0.10"} {
		if got, err := dev.NormalizeBaseURL(in); err == nil {
			t.Errorf("dev accepted %q as %q", in, got)
		}
	}
}

func TestNormalizePrefix(t *testing.T) {
	good := map[string]string{"": "", "/": "", "/api/v3": "/api/v3", "/api/v3/": "/api/v3", "/git-hub_1.x/~u": "/git-hub_1.x/~u"}
	for in, want := range good {
		if got, err := scmhost.NormalizePrefix(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, in := range []string{"api/v3", "/api//v3", "/api/../admin", "/./x", "/api?x=1", "/api#x", "/a b", "/%2e%2e", `/a\b`, "/" + strings.Repeat("a", scmhost.MaxPrefixLength)} {
		if got, err := scmhost.NormalizePrefix(in); err == nil {
			t.Errorf("accepted %q as %q", in, got)
		}
	}
}

func kindOf(t *testing.T, err error) scmhost.Kind {
	t.Helper()
	var e *scmhost.Error
	if !errors.As(err, &e) {
		t.Fatalf("not a verification error: %v", err)
	}
	if strings.Contains(e.Error(), token) {
		t.Fatalf("error message holds the token: %s", e)
	}
	return e.Kind
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	c := scmhost.New(scmhost.Options{AllowLoopback: true})
	for _, prefix := range []string{"", "/api/v3"} {
		host := scmhosttest.New(t, prefix)
		host.AddToken(token, 583231, "octo-bot")
		acct, err := c.Verify(ctx, host.URL+"/", prefix+"/", token)
		if err != nil || acct.ID != 583231 || acct.Login != "octo-bot" {
			t.Fatalf("prefix %q: %+v %v", prefix, acct, err)
		}
		if _, err := c.Verify(ctx, host.URL, prefix, "ghp_wrong"); kindOf(t, err) != scmhost.BadCredentials {
			t.Fatalf("bad token: %v", err)
		}
		if _, err := c.Verify(ctx, host.URL, prefix+"/nope", token); kindOf(t, err) != scmhost.NoUserEndpoint {
			t.Fatalf("wrong prefix: %v", err)
		}
	}
}

// answering serves every request with status, headers and body.
func answering(t *testing.T, status int, body string, header ...string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestVerifyFailures(t *testing.T) {
	ctx := context.Background()
	// The default timeout: reading 2 MiB under -race on a busy machine
	// takes more than a short one (the timeout case has its own client).
	c := scmhost.New(scmhost.Options{AllowLoopback: true})

	target := scmhosttest.New(t, "")
	target.AddToken(token, 1, "octocat")
	huge := `{"login":"x","id":7,"bio":"` + strings.Repeat("a", 2<<20) + `"}`
	cases := []struct {
		name string
		srv  *httptest.Server
		kind scmhost.Kind
	}{
		{"redirect", answering(t, http.StatusMovedPermanently, "", "Location", target.URL+"/user"), scmhost.Redirected},
		{"temporary redirect", answering(t, http.StatusTemporaryRedirect, "", "Location", target.URL+"/user"), scmhost.Redirected},
		{"forbidden", answering(t, 403, `{"message":"Resource not accessible by integration"}`), scmhost.Refused},
		{"rate limited", answering(t, 403, `{"message":"API rate limit exceeded"}`, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "4102444800"), scmhost.Refused},
		{"server error", answering(t, 502, `<html>bad gateway</html>`), scmhost.HostFailure},
		{"not json", answering(t, 200, `<html>login page</html>`), scmhost.BadResponse},
		{"not a user", answering(t, 200, `{"message":"hello"}`), scmhost.BadResponse},
		{"oversized", answering(t, 200, huge), scmhost.BadResponse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Verify(ctx, tc.srv.URL, "", token)
			if k := kindOf(t, err); k != tc.kind {
				t.Fatalf("kind %d, want %d: %v", k, tc.kind, err)
			}
		})
	}
	if n := target.Requests(); n != 0 {
		t.Fatalf("a redirect was followed: target got %d requests", n)
	}

	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
		t.Cleanup(slow.Close)
		t.Cleanup(func() { close(release) })
		short := scmhost.New(scmhost.Options{AllowLoopback: true, Timeout: 500 * time.Millisecond})
		if _, err := short.Verify(ctx, slow.URL, "", token); kindOf(t, err) != scmhost.Unreachable {
			t.Fatalf("slow host: %v", err)
		}
	})
	t.Run("closed port", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		if _, err := c.Verify(ctx, "http://"+addr, "", token); kindOf(t, err) != scmhost.Unreachable {
			t.Fatalf("closed port: %v", err)
		}
	})
}

// A host name that resolves to an internal address is refused when the
// connection is made, before anything is sent.
func TestDialGuard(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := scmhost.New(scmhost.Options{})
	base := "https://localhost:" + port
	if _, err := c.NormalizeBaseURL(base); err != nil {
		t.Fatalf("a host name is checked when dialling, not before: %v", err)
	}
	_, err := c.Verify(context.Background(), base, "", token)
	if kindOf(t, err) != scmhost.BlockedTarget {
		t.Fatalf("localhost: %v", err)
	}
	if hits.Load() != 0 {
		t.Fatal("the guarded host received a request")
	}
	if _, err := c.Verify(context.Background(), "https://127.0.0.1:"+port, "", token); err == nil {
		t.Fatal("loopback literal accepted")
	}
}
