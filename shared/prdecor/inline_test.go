package prdecor_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v72/github"

	"github.com/acme/codescan-api/internal/githost"
	"github.com/acme/codescan-api/shared/prdecor"
	storedelivery "github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

// mergeSHA is the test merge commit a pull_request workflow builds by
// default (its GITHUB_SHA); the pull request does not show it.
const mergeSHA = "3e1b9a5c2f4d6e8a0b1c3d5e7f9a1b3c5d7e9f01"

// GitHub's default checkout builds the merge commit: the status goes on
// the pull request's head, read from the host, not on what CI named.
func TestStatusLandsOnTheHead(t *testing.T) {
	w := newWorld(t)
	w.host.AddPullRequest(owner, repo, githost.PullRequest{Number: prNumber, HeadSHA: headSHA, MergeSHA: mergeSHA})
	vars := strings.Replace(w.pullRequestVars(), headSHA, mergeSHA, 1)
	id := w.scan(t, "fix-refund", sarif("api/refund.py"), vars)
	sc, err := w.env.Store.Scans.GetScan(context.Background(), w.acme.ID, id)
	if err != nil || sc.PullRequest == nil || sc.PullRequest.HeadSHA != mergeSHA {
		t.Fatalf("the scan should record what CI built: %+v %v", sc.PullRequest, err)
	}
	w.dispatch(t, w.completed(id))
	if st := lastStatus(t, w.host); st.State != "failure" || st.SHA != headSHA {
		t.Fatalf("status: %+v", st)
	}
	if n := len(w.host.Statuses(owner, repo, mergeSHA)); n != 0 {
		t.Fatalf("%d statuses on the merge commit", n)
	}
	if n := len(w.host.RequestsFor("pulls/get")); n != 1 {
		t.Fatalf("%d reads of the pull request", n)
	}
}

// addedPatch adds lines from..to of a new file.
func addedPatch(from, to int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "@@ -0,0 +%d,%d @@", from, to-from+1)
	for l := from; l <= to; l++ {
		fmt.Fprintf(&b, "\n+line %d", l)
	}
	return b.String()
}

// reviewed is a pull request whose diff adds api/a.py 10-14, api/b.py 5
// and api/c.py 7, and touches api/d.py without adding its line 3.
var reviewed = githost.PullRequest{Number: prNumber, HeadSHA: headSHA, MergeSHA: mergeSHA, Files: []githost.File{
	{Filename: "api/a.py", Status: "added", Patch: addedPatch(10, 14)},
	{Filename: "api/b.py", Patch: "@@ -4,2 +4,3 @@\n keep\n+added\n keep"},
	{Filename: "api/c.py", Patch: "@@ -6,2 +6,3 @@\n keep\n+added\n keep"},
	{Filename: "api/d.py", Patch: "@@ -1,4 +1,5 @@\n one\n two\n three\n+four\n five"},
}}

// fourFindings is a report with new findings on a.py:12 (critical),
// b.py:5 (high), c.py:7 (medium) — lines the pull request adds — and
// d.py:3 (critical) on a line it does not.
func fourFindings() string {
	result := func(rule, file string, line int, score string) string {
		return fmt.Sprintf(`{"ruleId":%q,"message":{"text":"%s in %s"},"properties":{"security-severity":%q},`+
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":%q},"region":{"startLine":%d}}}]}`, rule, rule, file, score, file, line)
	}
	results := []string{result("sqli", "api/a.py", 12, "9.8"), result("xss", "api/b.py", 5, "8.0"),
		result("weak-hash", "api/c.py", 7, "5.0"), result("cmdi", "api/d.py", 3, "9.5")}
	return `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"Semgrep OSS","rules":[` +
		`{"id":"sqli","properties":{"tags":["CWE-89","security"]}},{"id":"xss","properties":{"tags":["CWE-79","security"]}},` +
		`{"id":"weak-hash","properties":{"tags":["CWE-328","security"]}},{"id":"cmdi","properties":{"tags":["CWE-78","security"]}}]}},` +
		`"results":[` + strings.Join(results, ",") + `]}]}`
}

func reviewedLines(h *githost.Server) []string {
	var out []string
	for _, c := range h.ReviewComments(owner, repo, prNumber) {
		out = append(out, fmt.Sprintf("%s:%d@%s/%s", c.Path, c.Line, c.CommitID[:7], c.Side))
	}
	slices.Sort(out)
	return out
}

// Inline comments on: of three new findings on added lines and one on a
// line the pull request does not add, max_per_scan 2 posts exactly the two
// most urgent, on the head commit's right side; the same delivery retried
// and a second scan post none again; the summary comment is one, as
// without inline comments.
func TestInlineCommentsOnAddedLinesOnce(t *testing.T) {
	w := newWorldWith(t, &schema.InlineComments{Enabled: true, MaxPerScan: 2})
	w.host.AddPullRequest(owner, repo, reviewed)
	first := w.scan(t, "fix-refund", fourFindings(), w.pullRequestVars())
	w.dispatch(t, w.completed(first))

	want := []string{"api/a.py:12@" + headSHA[:7] + "/RIGHT", "api/b.py:5@" + headSHA[:7] + "/RIGHT"}
	if got := reviewedLines(w.host); !slices.Equal(got, want) {
		t.Fatalf("review comments on %v, want %v", got, want)
	}
	body := w.host.ReviewComments(owner, repo, prNumber)[0].Body
	t.Logf("a review comment:\n%s", body)
	if !strings.HasPrefix(body, "<!-- codescan:finding ") || !strings.Contains(body, "**CR** ` sqli ` · CWE-89") || !strings.Contains(body, "no-new-criticals") {
		t.Fatalf("review comment:\n%s", body)
	}

	// The same job attempted again (a retry after a later failure): the
	// links know both comments.
	ins, err := w.env.Store.Catalog.AllIntegrations(context.Background(), w.acme.ID)
	if err != nil || len(ins) != 1 {
		t.Fatalf("integrations: %v %v", ins, err)
	}
	d := w.decorator()
	if o := d.Decorate(context.Background(), w.acme.ID, first, ins[0].UUID); !o.Delivered {
		t.Fatalf("retry: %+v", o)
	}
	second := w.scan(t, "fix-refund", fourFindings(), w.pullRequestVars())
	w.dispatch(t, w.completed(second))
	if n := len(w.host.RequestsFor("pulls/create-review-comment")); n != 2 {
		t.Fatalf("%d review comments posted, want 2", n)
	}
	if n := len(w.host.RequestsFor("issues/create-comment")); n != 1 || len(w.host.IssueComments(owner, repo, prNumber)) != 1 {
		t.Fatalf("%d summary comments created", n)
	}
	if st := lastStatus(t, w.host); st.State != "failure" {
		t.Fatalf("status: %+v", st)
	}
}

// An attempt that posted a review comment and died before recording it
// left a link without the comment's id: the next attempt finds the comment
// by its marker and posts nothing for that finding.
func TestInlineCommentFoundAfterALostRecord(t *testing.T) {
	w, id := lostReviewRecord(t, token)
	w.dispatch(t, w.completed(id))
	if n := len(w.host.RequestsFor("pulls/create-review-comment")); n != 1 {
		t.Fatalf("%d review comments posted in all, want the dead attempt's only", n)
	}
	if n := len(w.host.RequestsFor("pulls/list-review-comments")); n != 1 {
		t.Fatalf("%d searches of the review comments", n)
	}
}

// The same lost record, but the comment with the finding's marker is
// someone else's: it is not taken for ours, ours is posted.
func TestInlineCommentOfAnotherAuthorIsNotOurs(t *testing.T) {
	w, id := lostReviewRecord(t, malloryToken)
	w.dispatch(t, w.completed(id))
	comments := w.host.ReviewComments(owner, repo, prNumber)
	if len(comments) != 2 {
		t.Fatalf("review comments: %+v", comments)
	}
	marker, _, _ := strings.Cut(comments[0].Body, "\n")
	if comments[0].User != "mallory" || comments[1].User != "codescan-bot" ||
		!strings.HasPrefix(comments[1].Body, marker+"\n") || !strings.HasPrefix(marker, "<!-- codescan:finding ") {
		t.Fatalf("review comments: %+v", comments)
	}
}

// lostReviewRecord is a scan whose top finding's review link was left
// without an id, and a review comment with its marker posted with poster
// (a token of the host).
func lostReviewRecord(t *testing.T, poster string) (*world, string) {
	t.Helper()
	w := newWorldWith(t, &schema.InlineComments{Enabled: true, MaxPerScan: 1})
	w.host.AddPullRequest(owner, repo, reviewed)
	id := w.scan(t, "fix-refund", fourFindings(), w.pullRequestVars())
	var top findings.Issue
	if err := w.env.Store.Lists.EachScanIssue(context.Background(), w.acme.ID, id, func(i findings.Issue) error {
		if i.FilePath == "api/a.py" {
			top = i
		}
		return nil
	}); err != nil || top.ID == "" {
		t.Fatalf("issues: %v", err)
	}
	ins, err := w.env.Store.Catalog.AllIntegrations(context.Background(), w.acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	target := storedelivery.ReviewTarget{CompanyID: w.acme.ID, Integration: ins[0].UUID, Repo: owner + "/" + repo, Number: fmt.Sprint(prNumber), IssueID: top.ID}
	if _, err := w.env.Store.Deliveries.ClaimReviewLink(context.Background(), target, "died", time.Now().Add(-time.Hour), time.Minute); err != nil {
		t.Fatal(err)
	}
	gh := github.NewClient(w.host.Client()).WithAuthToken(poster)
	gh.BaseURL, _ = url.Parse(w.host.URL())
	if _, _, err := gh.PullRequests.CreateComment(context.Background(), owner, repo, prNumber, &github.PullRequestComment{
		Body: github.Ptr(prdecor.ReviewMarker(top.ID) + "\nposted by the attempt that died"), CommitID: github.Ptr(headSHA),
		Path: github.Ptr("api/a.py"), Side: github.Ptr("RIGHT"), Line: github.Ptr(12)}); err != nil {
		t.Fatal(err)
	}
	return w, id
}

func TestInlineBudget(t *testing.T) {
	for _, c := range []struct {
		in   *schema.InlineComments
		want int
	}{
		{nil, 0}, {&schema.InlineComments{}, 0}, {&schema.InlineComments{MaxPerScan: 5}, 0},
		{&schema.InlineComments{Enabled: true}, schema.DefaultInlinePerScan},
		{&schema.InlineComments{Enabled: true, MaxPerScan: 3}, 3},
		{&schema.InlineComments{Enabled: true, MaxPerScan: 500}, schema.MaxInlinePerScan},
	} {
		if got := prdecor.InlineBudget(schema.Integration{InlineComments: c.in}); got != c.want {
			t.Errorf("%+v: %d, want %d", c.in, got, c.want)
		}
	}
}
