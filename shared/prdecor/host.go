package prdecor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/scmhost"
	storedelivery "github.com/acme/codescan-api/shared/store/delivery"
)

// host is one source-code host's side of a decoration, for the pull (or
// merge) request it was made for: GitHub's (github.go) or GitLab's
// (gitlab.go). publish is one flow over it.
type host interface {
	// head is the pull request's head commit, read from the host
	// (errNoHead when the host names none).
	head(ctx context.Context) (string, error)
	// findComment is the id of the pull request's comment that starts
	// with marker and that the integration's account wrote, 0 when none.
	findComment(ctx context.Context, marker string) (int64, error)
	createComment(ctx context.Context, body string) (int64, error)
	editComment(ctx context.Context, id int64, body string) (int64, error)
	// setStatus sets the verdict on commit sha; it returns the host's
	// answer's status code.
	setStatus(ctx context.Context, sha string, v verdict) (int, error)
	// gone tells an error that says the comment edited is no more.
	gone(err error) bool
	// failure classifies an error of this host's client.
	failure(doing string, err error) outbound.Outcome
}

// verdict is the commit status of a summary, whatever the host.
type verdict struct {
	failing     bool
	name        string // the status's context (GitHub) or name (GitLab)
	description string
	targetURL   string // "" when no link
}

var errNoHead = errors.New("the host named no head commit of the pull request")

// StatusContext names a project's commit status on the host.
func StatusContext(projectName string) string { return "codescan/" + projectName }

// maxDescription is the longest status description GitHub keeps (GitLab
// keeps 255 characters).
const maxDescription = 140

// callBudget is how many host calls' time a decoration without inline
// comments may take: the comment (edit, search, post), the pull request,
// the status.
const callBudget = 5

// publish writes the summary comment, then the status on the pull
// request's head, then (GitHub only, when the integration asks for them)
// the inline review comments. The comment goes under the link's lease:
// two scans of one pull request decorating at once write one comment.
func (d *Decorator) publish(ctx context.Context, j job, s Summary) outbound.Outcome {
	pr := newPull(j)
	h, err := d.hostFor(j, pr)
	if err != nil {
		return outbound.Outcome{Err: "the integration's base URL is not usable: " + err.Error()}
	}
	gh, isGitHub := h.(*githubHost)
	inline := 0
	if isGitHub {
		inline = InlineBudget(j.integration)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(callBudget+inline)*d.Host.Timeout())
	defer cancel()
	if o, ok := d.comment(ctx, h, pr, Comment(s)); !ok {
		return o
	}
	head, err := h.head(ctx)
	switch {
	case errors.Is(err, errNoHead):
		return outbound.Outcome{Err: errNoHead.Error()}
	case err != nil:
		return h.failure("reading the pull request", err)
	}
	code, err := h.setStatus(ctx, head, d.verdict(s))
	if err != nil {
		return h.failure("setting the status", err)
	}
	if inline > 0 {
		if o, ok := d.reviewComments(ctx, gh, head, s, inline); !ok {
			return o
		}
	}
	return outbound.Outcome{StatusCode: code, Delivered: true}
}

// hostFor is the client of the integration's host, by its provider.
func (d *Decorator) hostFor(j job, pr pull) (host, error) {
	// The account's id, as its token was verified (0, no one's, if
	// unreadable): only its comments are taken for ours.
	account, _ := strconv.ParseInt(j.integration.AccountID, 10, 64)
	if j.integration.HostProvider() == scmhost.ProviderGitLab {
		gl, err := d.Host.GitLab(j.integration.BaseURL, j.integration.GatewayPrefix, j.token)
		if err != nil {
			return nil, err
		}
		return &gitlabHost{c: gl, pr: pr, account: account}, nil
	}
	gh, err := d.Host.GitHub(j.integration.BaseURL, j.integration.GatewayPrefix, j.token)
	if err != nil {
		return nil, err
	}
	return &githubHost{c: gh, pr: pr, account: account}, nil
}

// pull names the pull (or merge) request a job decorates.
type pull struct {
	path        string // the repository's full path (GitLab: with its groups)
	owner, repo string // GitHub's owner and name
	number      int    // GitHub's number, GitLab's iid
	link        storedelivery.PRTarget
}

func newPull(j job) pull {
	pr := j.scan.PullRequest
	owner, repo, _ := strings.Cut(pr.Repo, "/")
	number, _ := strconv.Atoi(pr.Number)
	return pull{path: pr.Repo, owner: owner, repo: repo, number: number, link: storedelivery.PRTarget{CompanyID: j.scan.CompanyID,
		Integration: j.integration.UUID, Repo: pr.Repo, Number: pr.Number, ProjectID: j.project.ID}}
}

// verdict is the commit status of a summary.
func (d *Decorator) verdict(s Summary) verdict {
	v := verdict{failing: s.Failing(), name: StatusContext(s.Project.Name), description: truncate(statusLine(s), maxDescription)}
	if d.AppURL != "" {
		v.targetURL = strings.TrimRight(d.AppURL, "/") + "/scans/" + s.Scan.ID
	}
	return v
}

// comment creates or edits the pull request's summary comment: the one
// the link names, else the one that carries the marker, else a new one.
func (d *Decorator) comment(ctx context.Context, h host, pr pull, body string) (outbound.Outcome, bool) {
	lease := uuid.NewString()
	link, err := d.Store.Deliveries.ClaimPRLink(ctx, pr.link, lease, d.now(), linkLease)
	if errors.Is(err, storedelivery.ErrLinkBusy) {
		return outbound.Outcome{Retryable: true, RetryAfter: 5 * time.Second, Err: "another decoration of this pull request is in progress"}, false
	}
	if err != nil {
		return outbound.Outcome{Retryable: true, Err: "claiming the comment: " + err.Error()}, false
	}
	id, err := writeComment(ctx, h, link.CommentID, pr, body)
	if rerr := d.Store.Deliveries.ReleasePRLink(ctx, pr.link, lease, id); err == nil && rerr != nil && !errors.Is(rerr, storedelivery.ErrLinkBusy) {
		return outbound.Outcome{Retryable: true, Err: "recording the comment: " + rerr.Error()}, false
	}
	if err != nil {
		return h.failure("writing the comment", err), false
	}
	return outbound.Outcome{}, true
}

// writeComment edits comment known (0: none), or the one carrying the
// project's marker, or creates one; it returns the comment's id.
func writeComment(ctx context.Context, h host, known int64, pr pull, body string) (int64, error) {
	if known != 0 {
		id, err := h.editComment(ctx, known, body)
		if !h.gone(err) {
			return id, err
		}
	}
	found, err := h.findComment(ctx, Marker(pr.link.ProjectID))
	if err != nil {
		return 0, err
	}
	if found != 0 {
		return h.editComment(ctx, found, body)
	}
	return h.createComment(ctx, body)
}

// maxCommentPages bounds the search for the marker (100 comments a page).
const maxCommentPages = 30

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
