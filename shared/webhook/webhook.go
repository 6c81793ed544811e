// Package webhook sends signed webhooks per the Standard Webhooks
// specification (webhook-id, webhook-timestamp, webhook-signature
// "v1,<base64 HMAC-SHA256>", whsec_ secrets) with its Go library, through a
// client that refuses internal addresses at dial time and never follows
// redirects.
package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/acme/codescan-api/shared/netguard"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// NewSecret returns a random signing secret: whsec_ and 32 random bytes in
// base64, the form the Standard Webhooks libraries read.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// Options configure a Client.
type Options struct {
	// AllowLoopback permits plain http and loopback receivers (local
	// development and tests only).
	AllowLoopback bool
	// Timeout bounds one attempt, connection included (default 10s).
	Timeout time.Duration
}

// DefaultTimeout bounds an attempt when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// MaxURLLength bounds an endpoint URL.
const MaxURLLength = 2048

// Client sends webhooks. Build one per process.
type Client struct {
	opts Options
	http *http.Client
}

// New returns a Client.
func New(o Options) *Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return &Client{opts: o, http: netguard.Client(o.Timeout, o.AllowLoopback)}
}

// CheckURL validates an endpoint URL before it is stored: absolute, https
// (or http on loopback when allowed), no credentials, and no literal
// internal address. Names are checked again at dial time.
func (c *Client) CheckURL(raw string) (string, error) {
	if len(raw) > MaxURLLength {
		return "", fmt.Errorf("url must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", errors.New("url must be an absolute https URL")
	}
	if u.User != nil {
		return "", errors.New("url must not carry credentials")
	}
	if u.Fragment != "" {
		return "", errors.New("url must not have a fragment")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && c.opts.AllowLoopback:
	default:
		return "", errors.New("url must be an absolute https URL")
	}
	if !validPort(u.Port()) {
		return "", errors.New("url must have a port from 1 to 65535")
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && netguard.Blocked(ip, c.opts.AllowLoopback) {
		return "", errors.New("url must not point at a private, loopback, link-local or cloud-metadata address")
	}
	return u.String(), nil
}

// validPort accepts no port (the scheme's) or 1 to 65535; url.Parse checks
// only that a port is digits.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.ParseUint(p, 10, 16)
	return err == nil && n > 0
}

// Message is one signed request.
type Message struct {
	ID      string // webhook-id: the event id, the receiver's idempotency key
	Payload []byte
	// Secrets sign the message, each giving one signature (during a
	// rotation both the new and the previous secret sign).
	Secrets []string
}

// Result is what one attempt got.
type Result struct {
	StatusCode int
	Latency    time.Duration
	// RetryAfter is the receiver's Retry-After, when it sent one.
	RetryAfter time.Duration
	Err        error // no answer (refused address, timeout, connection error)
	badURL     bool  // the stored URL is not allowed (retrying cannot help)
	// Reason is a chat receiver's error code (Post), when it answered one.
	Reason string
}

// Blocked reports whether the attempt was refused by the address guard.
func (r Result) Blocked() bool {
	var b *netguard.BlockedAddressError
	return errors.As(r.Err, &b)
}

// Delivered reports a 2xx answer.
func (r Result) Delivered() bool { return r.Err == nil && r.StatusCode >= 200 && r.StatusCode < 300 }

// Retryable reports whether trying again may succeed: no answer (but not a
// refused address or URL), 5xx, 429 or 408.
func (r Result) Retryable() bool {
	if r.Err != nil {
		return !r.Blocked() && !r.badURL
	}
	return r.StatusCode >= 500 || r.StatusCode == http.StatusTooManyRequests || r.StatusCode == http.StatusRequestTimeout
}

// Headers returns the Standard Webhooks headers of m at ts.
func Headers(m Message, ts time.Time) (http.Header, error) {
	var sigs []string
	for _, s := range m.Secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			return nil, fmt.Errorf("webhook secret: %w", err)
		}
		sig, err := wh.Sign(m.ID, ts, m.Payload)
		if err != nil {
			return nil, err
		}
		sigs = append(sigs, sig)
	}
	h := http.Header{}
	h.Set(standardwebhooks.HeaderWebhookID, m.ID)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, strings.Join(sigs, " "))
	return h, nil
}

// Send posts m to endpoint once.
func (c *Client) Send(ctx context.Context, endpoint string, m Message) Result {
	h, err := Headers(m, time.Now())
	if err != nil {
		return Result{Err: err}
	}
	h.Set("Content-Type", "application/json")
	out, _ := c.post(ctx, endpoint, h, m.Payload)
	return out
}

// maxAnswer bounds what is read of a receiver's answer.
const maxAnswer = 64 << 10

// post sends body to endpoint once with header (and our User-Agent)
// through the guarded client: the result, and the start of the answer.
func (c *Client) post(ctx context.Context, endpoint string, header http.Header, body []byte) (Result, []byte) {
	u, err := url.Parse(endpoint)
	if err != nil || !(u.Scheme == "https" || u.Scheme == "http" && c.opts.AllowLoopback) {
		return Result{Err: errors.New("endpoint url is not an allowed https URL"), badURL: true}, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return Result{Err: err}, nil
	}
	req.Header = header
	req.Header.Set("User-Agent", "codescan-webhooks/1")
	start := time.Now()
	res, err := c.http.Do(req)
	if err != nil {
		return Result{Latency: time.Since(start), Err: err}, nil
	}
	answer, _ := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	res.Body.Close()
	return Result{StatusCode: res.StatusCode, Latency: time.Since(start), RetryAfter: retryAfter(res.Header.Get("Retry-After"), time.Now())}, answer
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Outcomes of an attempt, as the API reports them: a class, never the
// error's text (which names addresses and ports, and would let a caller map
// what the service can reach).
const (
	OutcomeDelivered         = "delivered"          // a 2xx answer
	OutcomeHTTPStatus        = "http_status"        // another status; see StatusCode
	OutcomeTimeout           = "timeout"            // no answer within the timeout
	OutcomeConnectionRefused = "connection_refused" // the receiver refused the connection
	OutcomeDNS               = "dns"                // the host name did not resolve
	OutcomeTLS               = "tls"                // the TLS handshake or certificate failed
	OutcomeBlockedAddress    = "blocked_address"    // the address is not public
	OutcomeInvalidURL        = "invalid_url"        // the stored URL is not allowed
	OutcomeConnectionError   = "connection_error"   // the connection failed otherwise
)

// Outcome classifies the attempt.
func (r Result) Outcome() string {
	var (
		dnsErr  *net.DNSError
		netErr  net.Error
		tlsRec  tls.RecordHeaderError
		tlsCert *tls.CertificateVerificationError
		tlsAl   tls.AlertError
		unknown x509.UnknownAuthorityError
		invalid x509.CertificateInvalidError
		host    x509.HostnameError
	)
	switch err := r.Err; {
	case err == nil && r.Delivered():
		return OutcomeDelivered
	case err == nil:
		return OutcomeHTTPStatus
	case r.badURL:
		return OutcomeInvalidURL
	case r.Blocked():
		return OutcomeBlockedAddress
	case errors.As(err, &dnsErr):
		return OutcomeDNS
	case errors.As(err, &tlsRec), errors.As(err, &tlsCert), errors.As(err, &tlsAl),
		errors.As(err, &unknown), errors.As(err, &invalid), errors.As(err, &host):
		return OutcomeTLS
	case errors.Is(err, syscall.ECONNREFUSED):
		return OutcomeConnectionRefused
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		return OutcomeTimeout
	}
	return OutcomeConnectionError
}
