package scmhost_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/acme/codescan-api/internal/gitlabhost"
	"github.com/acme/codescan-api/shared/scmhost"
)

// GitLab's GET /api/v4/user under base_url + gateway_prefix (a relative
// URL root): the account's id and username; a wrong token is bad
// credentials, a wrong root no user endpoint.
func TestVerifyGitLab(t *testing.T) {
	ctx := context.Background()
	h := gitlabhost.New(t, gitlabhost.WithToken(token, "codescan-bot"), gitlabhost.WithRelativeRoot("/gitlab"))
	c := scmhost.New(scmhost.Options{AllowLoopback: true})
	acct, err := c.VerifyFor(ctx, scmhost.ProviderGitLab, h.HostURL()+"/", "/gitlab/", token)
	if err != nil || acct.ID != 2001 || acct.Login != "codescan-bot" {
		t.Fatalf("verify: %+v %v", acct, err)
	}
	if r := h.RequestsFor("getApiV4User"); len(r) != 1 || r[0].Path != "/gitlab/api/v4/user" || r[0].Header.Get("PRIVATE-TOKEN") != token {
		t.Fatalf("request: %+v", r)
	}
	if _, err := c.VerifyGitLab(ctx, h.HostURL(), "/gitlab", "glpat-wrong"); kindOf(t, err) != scmhost.BadCredentials {
		t.Fatalf("wrong token: %v", err)
	}
	if _, err := c.VerifyGitLab(ctx, h.HostURL(), "", token); kindOf(t, err) != scmhost.NoUserEndpoint {
		t.Fatalf("wrong root: %v", err)
	}
	h.TakeViolations() // the request outside the instance's root, on purpose
	if _, err := c.VerifyGitLab(ctx, "http://169.254.169.254", "", token); err == nil {
		t.Fatal("a metadata address was called")
	}
}

// GitLab's 429 waits for its Retry-After, else its RateLimit-Reset; 5xx
// is retried, 4xx is not, 404 is named; the host's words are left out.
func TestFailureGitLab(t *testing.T) {
	reset := time.Now().Add(90 * time.Second).Unix()
	answers := map[string]func(http.ResponseWriter){
		"retry-after": func(w http.ResponseWriter) { w.Header().Set("Retry-After", "7"); w.WriteHeader(429) },
		"reset": func(w http.ResponseWriter) {
			w.Header().Set("RateLimit-Reset", strconv.FormatInt(reset, 10))
			w.WriteHeader(429)
		},
		"502": func(w http.ResponseWriter) { w.WriteHeader(502) },
		"403": func(w http.ResponseWriter) {
			w.WriteHeader(403)
			_, _ = w.Write([]byte(`{"message":"token glpat-secret"}`))
		},
		"404": func(w http.ResponseWriter) { w.WriteHeader(404) },
	}
	for name, answer := range answers {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { answer(w) }))
		gl, err := scmhost.New(scmhost.Options{AllowLoopback: true}).GitLab(srv.URL, "", token)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = gl.Users.CurrentUser()
		srv.Close()
		o := scmhost.FailureGitLab("reading", err)
		switch name {
		case "retry-after":
			if !o.Retryable || o.RetryAfter != 7*time.Second || o.StatusCode != 429 {
				t.Fatalf("%s: %+v", name, o)
			}
		case "reset":
			if !o.Retryable || o.RetryAfter < 80*time.Second || o.RetryAfter > 91*time.Second {
				t.Fatalf("%s: %+v", name, o)
			}
		case "502":
			if !o.Retryable || o.StatusCode != 502 {
				t.Fatalf("%s: %+v", name, o)
			}
		case "403", "404":
			if o.Retryable || o.StatusCode != map[string]int{"403": 403, "404": 404}[name] || o.Err != "reading: the host answered "+name {
				t.Fatalf("%s: %+v", name, o)
			}
		}
	}
	if o := scmhost.FailureGitLab("reading", errors.Join(gitlab.ErrNotFound)); o.Retryable {
		t.Fatalf("404: %+v", o)
	}
}
