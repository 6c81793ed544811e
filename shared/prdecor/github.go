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
	"github.com/acme/codescan-api/shared/store"
	storedelivery "github.com/acme/codescan-api/shared/store/delivery"
)

// StatusContext names a project's commit status on the host.
func StatusContext(projectName string) string { return "codescan/" + projectName }

// maxDescription is the longest status description GitHub keeps.
const maxDescription = 140

// publish writes the summary comment, then the status. The comment goes
// under the link's lease: two scans of one pull request decorating at once
// write one comment.
func (d *Decorator) publish(ctx context.Context, j job, s Summary) outbound.Outcome {
	gh, err := d.Host.GitHub(j.integration.BaseURL, j.integration.GatewayPrefix, j.token)
	if err != nil {
		return outbound.Outcome{Err: "the integration's base URL is not usable: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, 4*d.Host.Timeout())
	defer cancel()
	pr := j.scan.PullRequest
	owner, repo, _ := strings.Cut(pr.Repo, "/")
	number, _ := strconv.Atoi(pr.Number)
	target := storedelivery.PRTarget{CompanyID: j.scan.CompanyID, Integration: j.integration.UUID, Repo: pr.Repo, Number: pr.Number, ProjectID: j.project.ID}
	if o, ok := d.comment(ctx, gh, target, owner, repo, number, Comment(s)); !ok {
		return o
	}
	sha := statusSHA(j.scan)
	if sha == "" {
		return outbound.Outcome{Delivered: true, Err: "no commit to set the status on (the run named none)"}
	}
	status := &github.RepoStatus{State: github.Ptr("success"), Context: github.Ptr(StatusContext(j.project.Name)),
		Description: github.Ptr(truncate(statusLine(s), maxDescription))}
	if s.Failing() {
		status.State = github.Ptr("failure")
	}
	if d.AppURL != "" {
		status.TargetURL = github.Ptr(strings.TrimRight(d.AppURL, "/") + "/scans/" + s.Scan.ID)
	}
	_, res, err := gh.Repositories.CreateStatus(ctx, owner, repo, sha, status)
	if err != nil {
		return scmhost.Failure("setting the status", err)
	}
	return outbound.Outcome{StatusCode: res.StatusCode, Delivered: true}
}

// statusSHA is the commit the status goes on: the one the run scanned
// (the client's git_sha: the pull request's head when the job checks it
// out), else the one CI names (GitHub: GITHUB_SHA, which for a
// pull_request workflow is the test merge commit; GitLab: the head).
func statusSHA(sc store.Scan) string {
	if sc.GitSHA != "" {
		return sc.GitSHA
	}
	return sc.PullRequest.HeadSHA
}

// comment creates or edits the pull request's summary comment: the one
// the link names, else the one that carries the marker, else a new one.
func (d *Decorator) comment(ctx context.Context, gh *github.Client, t storedelivery.PRTarget, owner, repo string, number int, body string) (outbound.Outcome, bool) {
	lease := uuid.NewString()
	link, err := d.Store.ClaimPRLink(ctx, t, lease, d.now(), linkLease)
	if errors.Is(err, storedelivery.ErrLinkBusy) {
		return outbound.Outcome{Retryable: true, RetryAfter: 5 * time.Second, Err: "another decoration of this pull request is in progress"}, false
	}
	if err != nil {
		return outbound.Outcome{Retryable: true, Err: "claiming the comment: " + err.Error()}, false
	}
	id, err := d.writeComment(ctx, gh, link.CommentID, owner, repo, number, t.ProjectID, body)
	if rerr := d.Store.ReleasePRLink(ctx, t, lease, id); err == nil && rerr != nil && !errors.Is(rerr, storedelivery.ErrLinkBusy) {
		err = rerr
	}
	if err != nil {
		return scmhost.Failure("writing the comment", err), false
	}
	return outbound.Outcome{}, true
}

// writeComment edits comment known (0: none), or the one carrying the
// project's marker, or creates one; it returns the comment's id.
func (d *Decorator) writeComment(ctx context.Context, gh *github.Client, known int64, owner, repo string, number int, projectID int64, body string) (int64, error) {
	if known != 0 {
		c, _, err := gh.Issues.EditComment(ctx, owner, repo, known, &github.IssueComment{Body: &body})
		if !isNotFound(err) {
			return c.GetID(), err
		}
	}
	found, err := findMarked(ctx, gh, owner, repo, number, Marker(projectID))
	if err != nil {
		return 0, err
	}
	if found != 0 {
		c, _, err := gh.Issues.EditComment(ctx, owner, repo, found, &github.IssueComment{Body: &body})
		return c.GetID(), err
	}
	c, _, err := gh.Issues.CreateComment(ctx, owner, repo, number, &github.IssueComment{Body: &body})
	return c.GetID(), err
}

// maxCommentPages bounds the search for the marker (100 comments a page).
const maxCommentPages = 30

// findMarked is the id of the pull request's comment that starts with
// marker, 0 when none does.
func findMarked(ctx context.Context, gh *github.Client, owner, repo string, number int, marker string) (int64, error) {
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < maxCommentPages; page++ {
		list, res, err := gh.Issues.ListComments(ctx, owner, repo, number, opt)
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

func isNotFound(err error) bool {
	var e *github.ErrorResponse
	return errors.As(err, &e) && e.Response != nil && e.Response.StatusCode == http.StatusNotFound
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
