// Package scmhost verifies source-code-host credentials against the host's
// GitHub-compatible REST API: GET {base_url}{gateway_prefix}/user with the
// token must answer the account the token belongs to. Every connection goes
// through a guard that refuses internal addresses at dial time (see Blocked),
// redirects are never followed, and each call is bounded in time and size.
package scmhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-github/v72/github"

	"github.com/acme/codescan-api/shared/netguard"
)

// EnvAllowLoopback ("true" or "1") lets integrations' base URLs use plain
// http and loopback addresses: local development and tests only.
const EnvAllowLoopback = "INTEGRATION_ALLOW_LOOPBACK_HTTP"

// Options configure a Client.
type Options struct {
	// AllowLoopback permits plain http and loopback addresses. Only for
	// local development and tests, where the host is on this machine.
	AllowLoopback bool
	// Timeout bounds one verification, connection included (default 5s).
	Timeout time.Duration
}

// DefaultTimeout bounds a verification when Options.Timeout is zero.
const DefaultTimeout = 5 * time.Second

// maxResponseBytes bounds what is read from a host (a user object is ~2 KB).
const maxResponseBytes = 1 << 20

// Client verifies credentials. It is safe for concurrent use; build one per
// process so connections are reused.
type Client struct {
	opts Options
	http *http.Client
}

// New returns a Client.
func New(o Options) *Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	hc := netguard.Client(o.Timeout, o.AllowLoopback)
	hc.Transport = limitedBody{hc.Transport}
	return &Client{opts: o, http: hc}
}

type limitedBody struct{ rt http.RoundTripper }

func (l limitedBody) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := l.rt.RoundTrip(r)
	if res != nil {
		res.Body = &cappedReader{ReadCloser: res.Body, left: maxResponseBytes}
	}
	return res, err
}

var errTooLarge = errors.New("response exceeds the size limit")

// cappedReader fails once more than left bytes are read.
type cappedReader struct {
	io.ReadCloser
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// At the limit: only the end of the body is acceptable.
		n, err := c.ReadCloser.Read(make([]byte, 1))
		if n > 0 {
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}

// Limits of the values NormalizeBaseURL and NormalizePrefix accept.
const (
	MaxBaseURLLength = 2048
	MaxPrefixLength  = 200
)

// InvalidError says why a base URL or prefix is not acceptable.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return e.Reason }

// NormalizeBaseURL checks a host's base URL and returns it without a
// trailing slash: absolute, https (http only with AllowLoopback), a host,
// no credentials, query or fragment, and not an internal IP literal.
func (c *Client) NormalizeBaseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case len(raw) > MaxBaseURLLength:
		return "", &InvalidError{fmt.Sprintf("base_url must be at most %d characters", MaxBaseURLLength)}
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return "", &InvalidError{"base_url must be an absolute https URL"}
	case u.Scheme != "https" && !(u.Scheme == "http" && c.opts.AllowLoopback):
		return "", &InvalidError{"base_url must use https"}
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", &InvalidError{"base_url must not contain credentials, a query or a fragment"}
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && netguard.Blocked(ip, c.opts.AllowLoopback) {
		return "", &InvalidError{errBlockedTarget}
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

const errBlockedTarget = "base_url must not point at a private, loopback, link-local or cloud-metadata address"

var prefixPattern = regexp.MustCompile(`^(/[A-Za-z0-9._~-]+)*$`)

// NormalizePrefix checks a gateway prefix (a path such as "/api/v3", or
// empty) and returns it without a trailing slash.
func NormalizePrefix(raw string) (string, error) {
	p := strings.TrimRight(raw, "/")
	switch {
	case len(raw) > MaxPrefixLength:
		return "", &InvalidError{fmt.Sprintf("gateway_prefix must be at most %d characters", MaxPrefixLength)}
	case !prefixPattern.MatchString(p) || strings.Contains(p+"/", "/../") || strings.Contains(p+"/", "/./"):
		return "", &InvalidError{`gateway_prefix must be empty or a path like "/api/v3" (letters, digits, ".", "_", "~", "-" between slashes)`}
	}
	return p, nil
}

// Account is who a token authenticates as on the host.
type Account struct {
	ID    int64
	Login string
}

// Kind classifies a failed verification.
type Kind int

// Kinds of failure.
const (
	BadCredentials Kind = iota + 1 // the host rejected the token (401)
	Refused                        // the host refused the request (403, 429, other 4xx, rate limits)
	NoUserEndpoint                 // no authenticated-user endpoint there (404)
	Redirected                     // the host answered with a redirect, which is not followed
	BlockedTarget                  // the host resolves to an internal address
	Unreachable                    // no answer (DNS, connection, TLS, timeout)
	HostFailure                    // the host answered 5xx
	BadResponse                    // the answer is not a user account
)

// Error is a failed verification. Its message is safe to show to the client:
// it never holds the token.
type Error struct {
	Kind Kind
	msg  string
}

func (e *Error) Error() string { return e.msg }

// GitHub is a go-github client of the host's REST API under
// baseURL+prefix with token, over the guarded connection (internal
// addresses refused at dial time, redirects not followed, answers
// bounded). go-github keeps the base URL and rate-limit state per client,
// both of which belong to one integration, so it is built per use over
// the shared http.Client.
func (c *Client) GitHub(baseURL, prefix, token string) (*github.Client, error) {
	root, err := c.apiRoot(baseURL, prefix)
	if err != nil {
		return nil, err
	}
	endpoint, err := url.Parse(root + "/")
	if err != nil {
		return nil, &InvalidError{"base_url must be an absolute https URL"}
	}
	gh := github.NewClient(c.http).WithAuthToken(token)
	gh.BaseURL = endpoint
	return gh, nil
}

// Timeout bounds one call of the client's users (Verify's own bound).
func (c *Client) Timeout() time.Duration { return c.opts.Timeout }

// Verify calls the authenticated-user endpoint under baseURL+prefix with
// token and returns the account.
func (c *Client) Verify(ctx context.Context, baseURL, prefix, token string) (Account, error) {
	gh, err := c.GitHub(baseURL, prefix, token)
	if err != nil {
		return Account{}, err
	}
	return c.verifyWith(ctx, classify, func(ctx context.Context) (Account, error) {
		user, _, err := gh.Users.Get(ctx, "")
		return Account{ID: user.GetID(), Login: user.GetLogin()}, err
	})
}

// apiRoot is an integration's base_url and gateway_prefix, normalized and
// joined: where its host's API (GitHub) or its instance (GitLab) is.
func (c *Client) apiRoot(baseURL, prefix string) (string, error) {
	base, err := c.NormalizeBaseURL(baseURL)
	if err != nil {
		return "", err
	}
	if prefix, err = NormalizePrefix(prefix); err != nil {
		return "", err
	}
	return base + prefix, nil
}

// verifyWith asks a host who a token is (whoAmI, one call of its
// authenticated-user endpoint) within the client's timeout: a failed call
// is classified by the host's classifier, an answer without an account id
// is BadResponse.
func (c *Client) verifyWith(ctx context.Context, classify func(error) *Error, whoAmI func(context.Context) (Account, error)) (Account, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	a, err := whoAmI(ctx)
	if err != nil {
		return Account{}, classify(err)
	}
	if a.ID <= 0 {
		return Account{}, &Error{Kind: BadResponse, msg: "the host's answer is not a user account"}
	}
	return a, nil
}

func classify(err error) *Error {
	var (
		blocked  *netguard.BlockedAddressError
		redirect *github.RedirectionError
		rate     *github.RateLimitError
		abuse    *github.AbuseRateLimitError
		twoFA    *github.TwoFactorAuthError
		resp     *github.ErrorResponse
		syntax   *json.SyntaxError
		typ      *json.UnmarshalTypeError
		accepted *github.AcceptedError
	)
	switch {
	case errors.As(err, &blocked):
		return &Error{Kind: BlockedTarget, msg: errBlockedTarget}
	case errors.As(err, &redirect):
		return statusError(redirect.StatusCode)
	case errors.As(err, &rate), errors.As(err, &abuse):
		return &Error{Kind: Refused, msg: "the host's rate limit for this token is exhausted; try again later"}
	case errors.As(err, &twoFA):
		return &Error{Kind: BadCredentials, msg: "the host rejected the token (401: two-factor code required)"}
	case errors.As(err, &resp) && resp.Response != nil:
		return statusError(resp.Response.StatusCode)
	case errors.As(err, &syntax), errors.As(err, &typ), errors.As(err, &accepted), errors.Is(err, errTooLarge):
		return &Error{Kind: BadResponse, msg: "the host's answer is not a user account"}
	}
	return &Error{Kind: Unreachable, msg: "the host could not be reached"}
}

// statusError classifies a host's error status. The host's own message is
// left out: a host could echo the token in it.
func statusError(status int) *Error {
	switch {
	case status == http.StatusUnauthorized:
		return &Error{Kind: BadCredentials, msg: "the host rejected the token (401)"}
	case status == http.StatusNotFound:
		return &Error{Kind: NoUserEndpoint, msg: "the host has no authenticated-user endpoint at base_url + gateway_prefix + /user (404)"}
	case status >= 300 && status < 400:
		return &Error{Kind: Redirected, msg: fmt.Sprintf("the host answered with a redirect (%d), which is not followed; check base_url and gateway_prefix", status)}
	case status >= 500:
		return &Error{Kind: HostFailure, msg: fmt.Sprintf("the host failed to answer (%d)", status)}
	}
	return &Error{Kind: Refused, msg: fmt.Sprintf("the host refused the request (%d)", status)}
}
