package prdecor

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/google/go-github/v72/github"

	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/scmhost"
)

// githubHost decorates a GitHub (or GitHub Enterprise) pull request
// through go-github.
type githubHost struct {
	c       *github.Client
	pr      pull
	account int64 // the integration's account: only its comments are ours
}

// head reads the pull request's head commit. What CI names is not it on
// GitHub: a pull_request workflow builds (and its GITHUB_SHA names) the
// test merge commit, which the pull request does not show, and the head
// may have moved on since the run.
func (g *githubHost) head(ctx context.Context) (string, error) {
	p, _, err := g.c.PullRequests.Get(ctx, g.pr.owner, g.pr.repo, g.pr.number)
	if err != nil {
		return "", err
	}
	if p.GetHead().GetSHA() == "" {
		return "", errNoHead
	}
	return p.GetHead().GetSHA(), nil
}

// findComment searches the pull request's comments for one of the
// integration's account that starts with marker: a comment anyone else
// writes with the marker is never taken for ours (and edited with a token
// that may edit others' comments).
func (g *githubHost) findComment(ctx context.Context, marker string) (int64, error) {
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < maxCommentPages; page++ {
		list, res, err := g.c.Issues.ListComments(ctx, g.pr.owner, g.pr.repo, g.pr.number, opt)
		if err != nil {
			return 0, err
		}
		for _, c := range list {
			if c.GetUser().GetID() == g.account && strings.HasPrefix(c.GetBody(), marker) {
				return c.GetID(), nil
			}
		}
		if res.NextPage == 0 {
			return 0, nil
		}
		opt.Page = res.NextPage
	}
	return 0, nil
}

func (g *githubHost) createComment(ctx context.Context, body string) (int64, error) {
	c, _, err := g.c.Issues.CreateComment(ctx, g.pr.owner, g.pr.repo, g.pr.number, &github.IssueComment{Body: &body})
	return c.GetID(), err
}

func (g *githubHost) editComment(ctx context.Context, id int64, body string) (int64, error) {
	c, _, err := g.c.Issues.EditComment(ctx, g.pr.owner, g.pr.repo, id, &github.IssueComment{Body: &body})
	return c.GetID(), err
}

func (g *githubHost) setStatus(ctx context.Context, sha string, v verdict) (int, error) {
	st := &github.RepoStatus{State: github.Ptr("success"), Context: github.Ptr(v.name), Description: github.Ptr(v.description)}
	if v.failing {
		st.State = github.Ptr("failure")
	}
	if v.targetURL != "" {
		st.TargetURL = github.Ptr(v.targetURL)
	}
	_, res, err := g.c.Repositories.CreateStatus(ctx, g.pr.owner, g.pr.repo, sha, st)
	if err != nil {
		return 0, err
	}
	return res.StatusCode, nil
}

func (g *githubHost) gone(err error) bool { return hostStatus(err) == http.StatusNotFound }

func (g *githubHost) failure(doing string, err error) outbound.Outcome {
	return scmhost.Failure(doing, err)
}

// hostStatus is the status of GitHub's refusal err carries, 0 if none.
func hostStatus(err error) int {
	var e *github.ErrorResponse
	if errors.As(err, &e) && e.Response != nil {
		return e.Response.StatusCode
	}
	return 0
}
