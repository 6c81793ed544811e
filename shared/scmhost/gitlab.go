package scmhost

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/acme/codescan-api/shared/netguard"
	"github.com/acme/codescan-api/shared/outbound"
)

// Providers of an integration's host (the integration's `provider`).
const (
	ProviderGitHub = "github"
	ProviderGitLab = "gitlab"
)

// GitLabAPIPath is where GitLab serves its REST API under an instance's
// address. An integration's gateway_prefix on GitLab is the instance's
// relative URL root ("" for gitlab.com, e.g. "/gitlab" for a self-managed
// instance installed under one): the API is base_url + gateway_prefix +
// /api/v4.
const GitLabAPIPath = "/api/v4"

// GitLab is a client-go client of a GitLab instance's REST API at
// baseURL+prefix+/api/v4 with token (sent as PRIVATE-TOKEN), over the
// guarded connection. Its own retries are off (a failed call is the
// delivery's to retry, at the host's Retry-After), and so is its
// rate limiter until a response names GitLab's limit.
func (c *Client) GitLab(baseURL, prefix, token string) (*gitlab.Client, error) {
	root, err := c.apiRoot(baseURL, prefix)
	if err != nil {
		return nil, err
	}
	gl, err := gitlab.NewClient(token, gitlab.WithBaseURL(root+GitLabAPIPath), gitlab.WithHTTPClient(c.http),
		gitlab.WithoutRetries(), gitlab.WithUserAgent("codescan-api"))
	if err != nil {
		return nil, &InvalidError{"base_url must be an absolute https URL"}
	}
	return gl, nil
}

// VerifyFor verifies a token on an integration's host of the given
// provider: GitHub's GET /user (Verify) or GitLab's GET /api/v4/user.
func (c *Client) VerifyFor(ctx context.Context, provider, baseURL, prefix, token string) (Account, error) {
	if provider == ProviderGitLab {
		return c.VerifyGitLab(ctx, baseURL, prefix, token)
	}
	return c.Verify(ctx, baseURL, prefix, token)
}

// VerifyGitLab calls GitLab's GET {base_url}{gateway_prefix}/api/v4/user
// with token and returns the account (its numeric id and username).
func (c *Client) VerifyGitLab(ctx context.Context, baseURL, prefix, token string) (Account, error) {
	gl, err := c.GitLab(baseURL, prefix, token)
	if err != nil {
		return Account{}, err
	}
	return c.verifyWith(ctx, classifyGitLab, func(ctx context.Context) (Account, error) {
		user, _, err := gl.Users.CurrentUser(gitlab.WithContext(ctx))
		if err != nil || user == nil {
			return Account{}, err
		}
		return Account{ID: user.ID, Login: user.Username}, nil
	})
}

func classifyGitLab(err error) *Error {
	var (
		blocked *netguard.BlockedAddressError
		resp    *gitlab.ErrorResponse
		syntax  *json.SyntaxError
		typ     *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &blocked):
		return &Error{Kind: BlockedTarget, msg: errBlockedTarget}
	case errors.Is(err, gitlab.ErrNotFound):
		return &Error{Kind: NoUserEndpoint, msg: "the host has no authenticated-user endpoint at base_url + gateway_prefix + /api/v4/user (404)"}
	case errors.As(err, &resp) && resp.Response != nil:
		if resp.Response.StatusCode == http.StatusTooManyRequests {
			return &Error{Kind: Refused, msg: "the host's rate limit for this token is exhausted; try again later"}
		}
		return statusError(resp.Response.StatusCode)
	case errors.As(err, &syntax), errors.As(err, &typ), errors.Is(err, errTooLarge):
		return &Error{Kind: BadResponse, msg: "the host's answer is not a user account"}
	}
	return &Error{Kind: Unreachable, msg: "the host could not be reached"}
}

// FailureGitLab classifies a GitLab call's error as Failure does GitHub's:
// 429 waits for GitLab's Retry-After (else its RateLimit-Reset, else a
// minute), 5xx, 408 and lost connections are retried, other answers (401,
// 403, 404, 400, 422) are not. GitLab's own words are left out.
func FailureGitLab(doing string, err error) outbound.Outcome {
	var (
		resp    *gitlab.ErrorResponse
		blocked *netguard.BlockedAddressError
	)
	switch {
	case errors.Is(err, gitlab.ErrNotFound):
		return outbound.Outcome{StatusCode: http.StatusNotFound, Err: doing + ": the host answered 404"}
	case errors.As(err, &resp) && resp.Response != nil:
		code := resp.Response.StatusCode
		o := outbound.Outcome{StatusCode: code, Err: doing + ": the host answered " + strconv.Itoa(code),
			Retryable: code >= 500 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout}
		if code == http.StatusTooManyRequests {
			o.RetryAfter, o.Err = gitLabWait(resp.Response.Header, time.Now()), doing+": the host's rate limit"
		}
		return o
	case errors.As(err, &blocked):
		return outbound.Outcome{Err: doing + ": the host resolves to an internal address"}
	}
	return outbound.Outcome{Retryable: true, Err: doing + ": the host could not be reached"}
}

// gitLabWait is how long a 429 asks to wait: Retry-After (seconds), else
// until RateLimit-Reset (a Unix time), else a minute; at least a second.
func gitLabWait(h http.Header, now time.Time) time.Duration {
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s >= 0 {
		return max(time.Duration(s)*time.Second, time.Second)
	}
	if reset, err := strconv.ParseInt(h.Get("RateLimit-Reset"), 10, 64); err == nil {
		return max(time.Unix(reset, 0).Sub(now), time.Second)
	}
	return time.Minute
}
