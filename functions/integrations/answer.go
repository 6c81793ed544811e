package integrations

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v72/github"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/prtriage"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/schema"
)

// answer tells the comment's author what their command did, through the
// integration's token (post: GitHub's reaction or reply, GitLab's reply
// note). The command stands whatever the host answers: a failed answer is
// logged (its class, never the host's words, which could echo the token)
// and not retried.
func (h handlers) answer(r *http.Request, in schema.Integration, o prtriage.Outcome, post func(context.Context, prtriage.Outcome) error) {
	if o.Result == prtriage.Ignored {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), h.host.Timeout())
	defer cancel()
	if err := post(ctx, o); err != nil {
		h.log.Warn("answer on the pull request failed", "request_id", r.Header.Get(httpapi.RequestIDHeader),
			"integration", in.UUID, "result", o.Result, "error", answerFailure(err))
	}
}

// hostToken opens the integration's token, sealed to its record.
func (h handlers) hostToken(ctx context.Context, in schema.Integration) (string, error) {
	return h.sealer.Open(ctx, in.SealedToken, catalog.IntegrationTokenRecord(in.CompanyID, in.UUID))
}

func (h handlers) post(ctx context.Context, in schema.Integration, ev commentEvent, o prtriage.Outcome) error {
	token, err := h.hostToken(ctx, in)
	if err != nil {
		return err
	}
	gh, err := h.host.GitHub(in.BaseURL, in.GatewayPrefix, token)
	if err != nil {
		return err
	}
	owner, repo, _ := strings.Cut(ev.Repository.FullName, "/")
	if o.Reply == "" {
		_, _, err = gh.Reactions.CreateIssueCommentReaction(ctx, owner, repo, ev.Comment.ID, "+1")
		return err
	}
	_, _, err = gh.Issues.CreateComment(ctx, owner, repo, ev.Issue.Number, &github.IssueComment{Body: github.Ptr(o.Reply)})
	return err
}

// answerFailure is the class of a failed answer, for the log.
func answerFailure(err error) string {
	var (
		resp   *github.ErrorResponse
		glResp *gitlab.ErrorResponse
	)
	switch {
	case errors.As(err, &resp) && resp.Response != nil:
		return fmt.Sprintf("the host answered %d", resp.Response.StatusCode)
	case errors.As(err, &glResp) && glResp.Response != nil:
		return fmt.Sprintf("the host answered %d", glResp.Response.StatusCode)
	case errors.Is(err, gitlab.ErrNotFound):
		return "the host answered 404"
	case errors.Is(err, secrets.ErrMalformed):
		return "the stored token cannot be opened"
	case errors.Is(err, context.DeadlineExceeded):
		return "the host did not answer in time"
	}
	return "the host could not be reached"
}

// Opened webhook secrets are kept in the process for a while: a flood of
// forged deliveries naming a real integration then costs a key read each,
// not a KMS call each (KMS's quota is the account's, shared with every
// function). The key is the sealed value, so a new secret is opened anew.
const (
	secretCacheTTL = 10 * time.Minute
	maxSecrets     = 256
)

type hookSecrets struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]openedSecret
}

type openedSecret struct {
	secret []byte
	until  time.Time
}

func newHookSecrets() *hookSecrets { return &hookSecrets{m: map[[sha256.Size]byte]openedSecret{}} }

// open returns the integration's webhook secret, from the cache or opened
// with the sealer (bound to the integration's webhook record).
func (c *hookSecrets) open(ctx context.Context, sealer secrets.Sealer, in schema.Integration, now time.Time) ([]byte, error) {
	key := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s\x00%s", in.CompanyID, in.UUID, in.SealedWebhookSecret)))
	c.mu.Lock()
	s, ok := c.m[key]
	c.mu.Unlock()
	if ok && now.Before(s.until) {
		return s.secret, nil
	}
	plain, err := sealer.Open(ctx, in.SealedWebhookSecret, catalog.IntegrationWebhookRecord(in.CompanyID, in.UUID))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxSecrets {
		for k, v := range c.m {
			if !now.Before(v.until) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxSecrets { // all fresh: start over rather than grow
			clear(c.m)
		}
	}
	c.m[key] = openedSecret{secret: []byte(plain), until: now.Add(secretCacheTTL)}
	return []byte(plain), nil
}
