package prdecor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v72/github"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/prdecor/patchlines"
	"github.com/acme/codescan-api/shared/prtriage"
	"github.com/acme/codescan-api/shared/scmhost"
	storedelivery "github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Inline review comments: when the integration enables them, the new
// findings of a summary that sit on lines the pull request adds get a
// comment each on that line, the most urgent first, at most the
// integration's max_per_scan a scan, each finding once per pull request
// (a link item per finding, written under a lease before the post and
// given the comment's id after it).

// InlineBudget is how many inline comments one decoration through the
// integration may post: 0 when the setting is off.
func InlineBudget(in schema.Integration) int { return in.InlineComments.PerScan() }

// ReviewMarker is the hidden first line of a finding's review comment: a
// decoration that lost the comment's id finds the comment again by it.
func ReviewMarker(issueID string) string {
	return "<!-- codescan:finding " + issueID + " -->"
}

// maxFilePages bounds the pull request's files read (100 a page; GitHub
// lists at most 3,000).
const maxFilePages = 30

// reviewComments posts the inline comments a summary asks for.
func (d *Decorator) reviewComments(ctx context.Context, g *githubHost, head string, s Summary, limit int) (outbound.Outcome, bool) {
	if len(s.New) == 0 {
		return outbound.Outcome{}, true
	}
	gh, pr := g.c, g.pr
	added, err := addedLines(ctx, gh, pr)
	if err != nil {
		return scmhost.Failure("reading the pull request's files", err), false
	}
	known := &reviewIndex{pr: pr, account: g.account}
	for _, i := range onAddedLines(s.New, added, limit) {
		if o, ok := d.reviewOnce(ctx, gh, pr, head, known, i, s.Blocking[i.ID]); !ok {
			return o, false
		}
	}
	return outbound.Outcome{}, true
}

// onAddedLines keeps the findings (urgent first, as a summary lists them)
// whose file:line the pull request adds, at most limit.
func onAddedLines(issues []findings.Issue, added map[string]map[int]bool, limit int) []findings.Issue {
	var out []findings.Issue
	for _, i := range issues {
		if len(out) == limit {
			break
		}
		if i.Line > 0 && added[i.FilePath][i.Line] {
			out = append(out, i)
		}
	}
	return out
}

// addedLines reads which lines of which files the pull request adds.
func addedLines(ctx context.Context, gh *github.Client, pr pull) (map[string]map[int]bool, error) {
	out := map[string]map[int]bool{}
	opt := &github.ListOptions{PerPage: 100}
	for page := 0; page < maxFilePages; page++ {
		files, res, err := gh.PullRequests.ListFiles(ctx, pr.owner, pr.repo, pr.number, opt)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			// A patch that cannot be read offers no line to comment on.
			if lines, err := patchlines.Added(f.GetPatch()); err == nil && len(lines) > 0 {
				out[f.GetFilename()] = lines
			}
		}
		if res.NextPage == 0 {
			break
		}
		opt.Page = res.NextPage
	}
	return out, nil
}

// reviewOnce makes sure one finding has its review comment: nothing when
// its link knows the comment, the comment found by its marker when an
// earlier attempt may have posted it unrecorded, else a new one.
func (d *Decorator) reviewOnce(ctx context.Context, gh *github.Client, pr pull, head string, known *reviewIndex, i findings.Issue, blocks []string) (outbound.Outcome, bool) {
	t := storedelivery.ReviewTarget{CompanyID: pr.link.CompanyID, Integration: pr.link.Integration, Repo: pr.link.Repo,
		Number: pr.link.Number, IssueID: i.ID}
	lease := uuid.NewString()
	before, err := d.Store.Deliveries.ClaimReviewLink(ctx, t, lease, d.now(), linkLease)
	if errors.Is(err, storedelivery.ErrLinkBusy) {
		return outbound.Outcome{Retryable: true, RetryAfter: 5 * time.Second, Err: "another decoration is commenting on this finding"}, false
	}
	if err != nil {
		return outbound.Outcome{Retryable: true, Err: "claiming a review comment: " + err.Error()}, false
	}
	id := before.CommentID
	if id == 0 && before.Exists() {
		id, err = known.find(ctx, gh, ReviewMarker(i.ID))
	}
	if id == 0 && err == nil {
		var c *github.PullRequestComment
		c, _, err = gh.PullRequests.CreateComment(ctx, pr.owner, pr.repo, pr.number, &github.PullRequestComment{
			Body: github.Ptr(ReviewComment(i, blocks)), CommitID: github.Ptr(head), Path: github.Ptr(i.FilePath),
			Side: github.Ptr("RIGHT"), Line: github.Ptr(i.Line)})
		id = c.GetID()
		if hostStatus(err) == http.StatusUnprocessableEntity {
			// The host refuses this anchor (the head moved on since the
			// files were read): the finding goes without a comment, the
			// rest of the decoration stands, a later scan tries again.
			err = nil
		}
	}
	if rerr := d.Store.Deliveries.ReleaseReviewLink(ctx, t, lease, id); err == nil && rerr != nil && !errors.Is(rerr, storedelivery.ErrLinkBusy) {
		return outbound.Outcome{Retryable: true, Err: "recording a review comment: " + rerr.Error()}, false
	}
	if err != nil {
		return scmhost.Failure("posting a review comment", err), false
	}
	return outbound.Outcome{}, true
}

// reviewIndex is the pull request's review comments by marker, read once
// per decoration and only when an earlier attempt left a link without an id.
type reviewIndex struct {
	pr      pull
	account int64 // only the integration's account's comments are ours
	byMark  map[string]int64
}

// maxReviewPages bounds the search for markers (100 comments a page).
const maxReviewPages = 30

func (x *reviewIndex) find(ctx context.Context, gh *github.Client, marker string) (int64, error) {
	if x.byMark == nil {
		x.byMark = map[string]int64{}
		opt := &github.PullRequestListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
		for page := 0; page < maxReviewPages; page++ {
			list, res, err := gh.PullRequests.ListComments(ctx, x.pr.owner, x.pr.repo, x.pr.number, opt)
			if err != nil {
				x.byMark = nil
				return 0, err
			}
			for _, c := range list {
				if first, _, _ := strings.Cut(c.GetBody(), "\n"); c.GetUser().GetID() == x.account && strings.HasPrefix(first, "<!-- codescan:finding ") {
					x.byMark[first] = c.GetID()
				}
			}
			if res.NextPage == 0 {
				break
			}
			opt.Page = res.NextPage
		}
	}
	return x.byMark[marker], nil
}

// ReviewComment is the Markdown of a finding's inline comment: its marker,
// what it is (urgency, rule, CWE, the blocking rules it triggers), the
// report's message, the ref a reviewer's triage command names, and the
// scanner's own fix when there is one. Report text is written safe, as in
// the summary.
func ReviewComment(i findings.Issue, blocks []string) string {
	var b strings.Builder
	b.WriteString(ReviewMarker(i.ID) + "\n")
	fmt.Fprintf(&b, "**%s** %s · %s · Ref %s", i.Urgency, code(i.RuleID), cweText(i.CWE), code(prtriage.Ref(i.ID)))
	if len(blocks) > 0 {
		fmt.Fprintf(&b, " · blocks: %s", safeLine(strings.Join(blocks, ", ")))
	}
	b.WriteString("\n\n")
	if m := strings.TrimSpace(cmpOr(i.Message, i.Title)); m != "" {
		b.WriteString(safeLine(truncate(m, 2000)) + "\n\n")
	}
	if i.Fix != nil && i.Fix.Diff != "" {
		suggestedFix(&b, i)
	}
	b.WriteString("<sub>Reply `/codescan ignore " + prtriage.Ref(i.ID) + " <reason>` on the summary comment to triage it.</sub>\n")
	return b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
