package prdecor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v72/github"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/scmhost"
	storedelivery "github.com/acme/codescan-api/shared/store/delivery"
)

// StatusContext names a project's commit status on the host.
func StatusContext(projectName string) string { return "codescan/" + projectName }

// maxDescription is the longest status description GitHub keeps.
const maxDescription = 140

// publish writes the summary comment, then the status on the pull
// request's head, then (when the integration asks for them) the inline
// review comments. The comment goes under the link's lease: two scans of
// one pull request decorating at once write one comment.
func (d *Decorator) publish(ctx context.Context, j job, s Summary) outbound.Outcome {
	gh, err := d.Host.GitHub(j.integration.BaseURL, j.integration.GatewayPrefix, j.token)
	if err != nil {
		return outbound.Outcome{Err: "the integration's base URL is not usable: " + err.Error()}
	}
	inline := InlineBudget(j.integration)
	ctx, cancel := context.WithTimeout(ctx, time.Duration(callBudget+inline)*d.Host.Timeout())
	defer cancel()
	pr := newPull(j)
	if o, ok := d.comment(ctx, gh, pr, Comment(s)); !ok {
		return o
	}
	head, o, ok := headSHA(ctx, gh, pr)
	if !ok {
		return o
	}
	_, res, err := gh.Repositories.CreateStatus(ctx, pr.owner, pr.repo, head, d.status(s))
	if err != nil {
		return scmhost.Failure("setting the status", err)
	}
	if inline > 0 {
		if o, ok := d.reviewComments(ctx, gh, pr, head, s, inline); !ok {
			return o
		}
	}
	return outbound.Outcome{StatusCode: res.StatusCode, Delivered: true}
}

// callBudget is how many host calls' time a decoration without inline
// comments may take: the comment (edit, search, post), the pull request,
// the status.
const callBudget = 5

// pull names the pull request a job decorates.
type pull struct {
	owner, repo string
	number      int
	link        storedelivery.PRTarget // the summary comment's link
}

func newPull(j job) pull {
	pr := j.scan.PullRequest
	owner, repo, _ := strings.Cut(pr.Repo, "/")
	number, _ := strconv.Atoi(pr.Number)
	return pull{owner: owner, repo: repo, number: number, link: storedelivery.PRTarget{CompanyID: j.scan.CompanyID,
		Integration: j.integration.UUID, Repo: pr.Repo, Number: pr.Number, ProjectID: j.project.ID}}
}

// headSHA reads the pull request's head commit from the host. What CI
// names is not it on GitHub: a pull_request workflow builds (and its
// GITHUB_SHA names) the test merge commit, which the pull request does not
// show, and the head may have moved on since the run.
func headSHA(ctx context.Context, gh *github.Client, pr pull) (string, outbound.Outcome, bool) {
	p, _, err := gh.PullRequests.Get(ctx, pr.owner, pr.repo, pr.number)
	if err != nil {
		return "", scmhost.Failure("reading the pull request", err), false
	}
	if p.GetHead().GetSHA() == "" {
		return "", outbound.Outcome{Err: "the host named no head commit of the pull request"}, false
	}
	return p.GetHead().GetSHA(), outbound.Outcome{}, true
}

// status is the commit status of a summary.
func (d *Decorator) status(s Summary) *github.RepoStatus {
	st := &github.RepoStatus{State: github.Ptr("success"), Context: github.Ptr(StatusContext(s.Project.Name)),
		Description: github.Ptr(truncate(statusLine(s), maxDescription))}
	if s.Failing() {
		st.State = github.Ptr("failure")
	}
	if d.AppURL != "" {
		st.TargetURL = github.Ptr(strings.TrimRight(d.AppURL, "/") + "/scans/" + s.Scan.ID)
	}
	return st
}

// comment creates or edits the pull request's summary comment: the one
// the link names, else the one that carries the marker, else a new one.
func (d *Decorator) comment(ctx context.Context, gh *github.Client, pr pull, body string) (outbound.Outcome, bool) {
	lease := uuid.NewString()
	link, err := d.Store.ClaimPRLink(ctx, pr.link, lease, d.now(), linkLease)
	if errors.Is(err, storedelivery.ErrLinkBusy) {
		return outbound.Outcome{Retryable: true, RetryAfter: 5 * time.Second, Err: "another decoration of this pull request is in progress"}, false
	}
	if err != nil {
		return outbound.Outcome{Retryable: true, Err: "claiming the comment: " + err.Error()}, false
	}
	id, err := d.writeComment(ctx, gh, link.CommentID, pr, body)
	if rerr := d.Store.ReleasePRLink(ctx, pr.link, lease, id); err == nil && rerr != nil && !errors.Is(rerr, storedelivery.ErrLinkBusy) {
		err = rerr
	}
	if err != nil {
		return scmhost.Failure("writing the comment", err), false
	}
	return outbound.Outcome{}, true
}

// writeComment edits comment known (0: none), or the one carrying the
// project's marker, or creates one; it returns the comment's id.
func (d *Decorator) writeComment(ctx context.Context, gh *github.Client, known int64, pr pull, body string) (int64, error) {
	if known != 0 {
		c, _, err := gh.Issues.EditComment(ctx, pr.owner, pr.repo, known, &github.IssueComment{Body: &body})
		if !isNotFound(err) {
			return c.GetID(), err
		}
	}
	found, err := findMarked(ctx, gh, pr, Marker(pr.link.ProjectID))
	if err != nil {
		return 0, err
	}
	if found != 0 {
		c, _, err := gh.Issues.EditComment(ctx, pr.owner, pr.repo, found, &github.IssueComment{Body: &body})
		return c.GetID(), err
	}
	c, _, err := gh.Issues.CreateComment(ctx, pr.owner, pr.repo, pr.number, &github.IssueComment{Body: &body})
	return c.GetID(), err
}

// maxCommentPages bounds the search for the marker (100 comments a page).
const maxCommentPages = 30

// findMarked is the id of the pull request's comment that starts with
// marker, 0 when none does.
func findMarked(ctx context.Context, gh *github.Client, pr pull, marker string) (int64, error) {
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < maxCommentPages; page++ {
		list, res, err := gh.Issues.ListComments(ctx, pr.owner, pr.repo, pr.number, opt)
		if err != nil {
			return 0, err
		}
		for _, c := range list {
			if strings.HasPrefix(c.GetBody(), marker) {
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

func isNotFound(err error) bool { return hostStatus(err) == http.StatusNotFound }

// hostStatus is the status of the host's refusal err carries, 0 if none.
func hostStatus(err error) int {
	var e *github.ErrorResponse
	if errors.As(err, &e) && e.Response != nil {
		return e.Response.StatusCode
	}
	return 0
}

// statusLine is the status's one-line description.
func statusLine(s Summary) string {
	if s.Failing() {
		return fmt.Sprintf("%d new finding(s) block: %d new against %s", len(s.Blocking), s.NewTotal, baselineName(s))
	}
	return fmt.Sprintf("No blocking finding: %d new against %s, %d fixed", s.NewTotal, baselineName(s), s.FixedTotal)
}

func baselineName(s Summary) string {
	if s.Baseline == "" {
		return "no baseline"
	}
	return s.Baseline
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return norm.ClipTo(s, n-len("…")) + "…"
}
