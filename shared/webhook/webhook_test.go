package webhook

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Every attempt is reported as a class; the receivers are on loopback.
func TestOutcome(t *testing.T) {
	status := func(code int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	// A receiver that accepts the connection and never answers.
	hang := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	t.Cleanup(func() { close(hang); silent.Close() })
	// A port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/hook"
	ln.Close()

	// Every answer comes well within a generous timeout, even on a loaded
	// machine (a TLS handshake there can take longer than half a second);
	// only the receiver that never answers meets the short one.
	local := New(Options{AllowLoopback: true, Timeout: 30 * time.Second})
	short := New(Options{AllowLoopback: true, Timeout: 300 * time.Millisecond})
	for _, tc := range []struct {
		name, url, want string
		client          *Client
	}{
		{"2xx", status(http.StatusNoContent), OutcomeDelivered, local},
		{"5xx", status(http.StatusBadGateway), OutcomeHTTPStatus, local},
		{"3xx is an answer", status(http.StatusFound), OutcomeHTTPStatus, local},
		{"closed port", closed, OutcomeConnectionRefused, local},
		{"untrusted certificate", tlsSrv.URL, OutcomeTLS, local},
		{"no answer", silent.URL, OutcomeTimeout, short},
		{"loopback in AWS", tlsSrv.URL, OutcomeBlockedAddress, New(Options{Timeout: time.Second})},
		{"not http", "ftp://127.0.0.1/x", OutcomeInvalidURL, local},
	} {
		res := tc.client.Send(context.Background(), tc.url, Message{ID: "msg_1", Payload: []byte("{}")})
		if got := res.Outcome(); got != tc.want {
			t.Errorf("%s: %s (%v), want %s", tc.name, got, res.Err, tc.want)
		}
	}
	// A name that does not resolve (built here: tests make no DNS queries).
	dns := Result{Err: &url.Error{Op: "Post", URL: "https://nowhere.invalid/", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}}}}
	if got := dns.Outcome(); got != OutcomeDNS {
		t.Errorf("unresolvable name: %s", got)
	}
	reset := Result{Err: &url.Error{Op: "Post", URL: "https://x.test/", Err: &net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}}}
	if got := reset.Outcome(); got != OutcomeConnectionError {
		t.Errorf("closed connection: %s", got)
	}
}

func TestCheckURLPorts(t *testing.T) {
	c := New(Options{})
	for _, port := range []string{"0", "65536", "99999", "18446744073709551617"} {
		if _, err := c.CheckURL("https://hooks.example.com:" + port + "/"); err == nil || !strings.HasPrefix(err.Error(), "url ") {
			t.Errorf("port %s: %v", port, err)
		}
	}
	for _, u := range []string{"https://hooks.example.com/", "https://hooks.example.com:1/", "https://hooks.example.com:65535/", "https://[2001:db8::1]:8443/"} {
		if _, err := c.CheckURL(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}
