package githost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v72/github"
)

const (
	owner = "acme"
	repo  = "shop"
	head  = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	// marker is how the product finds its summary comment again.
	marker = "<!-- codescan:summary -->"
)

// mainGoPatch replaces old line 3 of main.go with new lines 3-5.
const mainGoPatch = `@@ -1,5 +1,7 @@
 package main
 
-import "fmt"
+import (
+	"fmt"
+)
 
 func main() {`

func seeded(t *testing.T, opts ...Option) *Server {
	t.Helper()
	s := New(t, opts...)
	s.AddPullRequest(owner, repo, PullRequest{Number: 7, HeadSHA: head, Files: []File{
		{Filename: "main.go", Status: "modified", Patch: mainGoPatch},
		{Filename: "logo.png", Status: "added"},
	}})
	return s
}

// client is go-github configured as our integration code configures it: the
// base URL is base_url + gateway_prefix + "/".
func client(t *testing.T, s *Server, token string) *github.Client {
	t.Helper()
	c := github.NewClient(s.Client()).WithAuthToken(token)
	base, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	c.BaseURL = base
	return c
}

func bothBasePaths(t *testing.T, f func(t *testing.T, opts ...Option)) {
	t.Run("github.com", func(t *testing.T) { f(t) })
	t.Run("enterprise", func(t *testing.T) { f(t, WithEnterprise()) })
}

func TestEveryDescribedOperationHasAHandler(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	described := map[string]bool{}
	for _, id := range v.contract.OperationIDs() {
		described[id] = true
		if handlers[id] == nil {
			t.Errorf("no handler for %s", id)
		}
	}
	for id := range handlers {
		if !described[id] {
			t.Errorf("handler for %s, which the excerpt does not describe", id)
		}
	}
}

func TestAuthenticatedUser(t *testing.T) {
	bothBasePaths(t, func(t *testing.T, opts ...Option) {
		s := New(t, append(opts, WithToken("tok-1", "decorator-bot"))...)
		u, _, err := client(t, s, "tok-1").Users.Get(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if u.GetLogin() != "decorator-bot" || u.GetID() <= 0 {
			t.Errorf("user = %q/%d, want decorator-bot with an id", u.GetLogin(), u.GetID())
		}
		if got := s.RequestsFor("users/get-authenticated"); len(got) != 1 || got[0].Path != s.Prefix()+"/user" {
			t.Errorf("recorded %+v", got)
		}
	})
}

func TestCommitStatus(t *testing.T) {
	bothBasePaths(t, func(t *testing.T, opts ...Option) {
		s := seeded(t, opts...)
		st, resp, err := client(t, s, "test-token").Repositories.CreateStatus(context.Background(), owner, repo, head, &github.RepoStatus{
			State: github.Ptr("failure"), Context: github.Ptr("codescan"), Description: github.Ptr("2 new findings"),
			TargetURL: github.Ptr("https://codescan.example/scans/1"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusCreated || st.GetState() != "failure" || st.GetCreator().GetLogin() != "codescan-bot" {
			t.Errorf("answer %d %+v", resp.StatusCode, st)
		}
		got := s.Statuses(owner, repo, head)
		if len(got) != 1 || got[0].State != "failure" || got[0].Context != "codescan" || *got[0].Description != "2 new findings" {
			t.Errorf("stored %+v", got)
		}
	})
}

func TestStatusOnUnknownCommitIsRefused(t *testing.T) {
	s := seeded(t)
	_, resp, err := client(t, s, "test-token").Repositories.CreateStatus(context.Background(), owner, repo, strings.Repeat("a", 40), &github.RepoStatus{State: github.Ptr("success")})
	if err == nil || resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "No commit found for SHA") {
		t.Fatalf("err = %v", err)
	}
}

// TestSummaryCommentFoundByMarker walks the product's flow: list the
// conversation, find the summary by its hidden marker, create it once,
// then edit it in place on the next run.
func TestSummaryCommentFoundByMarker(t *testing.T) {
	bothBasePaths(t, func(t *testing.T, opts ...Option) {
		s := seeded(t, opts...)
		s.AddIssueComment(owner, repo, 7, "alice", "Looks good to me")
		gh := client(t, s, "test-token")
		upsertSummary(t, gh, marker+"\n1 new finding")
		upsertSummary(t, gh, marker+"\nno new findings")

		comments := s.IssueComments(owner, repo, 7)
		if len(comments) != 2 || comments[1].Body != marker+"\nno new findings" || comments[1].User != "codescan-bot" {
			t.Fatalf("comments = %+v", comments)
		}
		if n := len(s.RequestsFor("issues/create-comment")); n != 1 {
			t.Errorf("%d comments created, want 1", n)
		}
		if n := len(s.RequestsFor("issues/update-comment")); n != 1 {
			t.Errorf("%d comments edited, want 1", n)
		}
	})
}

func upsertSummary(t *testing.T, gh *github.Client, body string) {
	t.Helper()
	ctx := context.Background()
	list, _, err := gh.Issues.ListComments(ctx, owner, repo, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if strings.Contains(c.GetBody(), marker) {
			edited, _, err := gh.Issues.EditComment(ctx, owner, repo, c.GetID(), &github.IssueComment{Body: &body})
			if err != nil || edited.GetBody() != body {
				t.Fatalf("edit: %v %+v", err, edited)
			}
			return
		}
	}
	created, _, err := gh.Issues.CreateComment(ctx, owner, repo, 7, &github.IssueComment{Body: &body})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(created.GetHTMLURL(), "/acme/shop/pull/7#issuecomment-") {
		t.Errorf("html_url = %s", created.GetHTMLURL())
	}
}

func TestCommentListFollowsLinkPages(t *testing.T) {
	s := seeded(t)
	for i := range 45 {
		s.AddIssueComment(owner, repo, 7, "alice", fmt.Sprintf("comment %d", i))
	}
	gh := client(t, s, "test-token")
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 20}}
	var bodies []string
	for {
		page, resp, err := gh.Issues.ListComments(context.Background(), owner, repo, 7, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			bodies = append(bodies, c.GetBody())
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	if len(bodies) != 45 || bodies[44] != "comment 44" {
		t.Errorf("read %d comments, last %q", len(bodies), bodies[len(bodies)-1])
	}
	if n := len(s.RequestsFor("issues/list-comments")); n != 3 {
		t.Errorf("%d pages fetched, want 3", n)
	}
}

func TestReaction(t *testing.T) {
	s := seeded(t)
	c := s.AddIssueComment(owner, repo, 7, "alice", "/codescan rescan")
	gh := client(t, s, "test-token")
	for _, want := range []int{http.StatusCreated, http.StatusOK} {
		_, resp, err := gh.Reactions.CreateIssueCommentReaction(context.Background(), owner, repo, c.ID, "eyes")
		if err != nil || resp.StatusCode != want {
			t.Fatalf("status %v, err %v; want %d", resp, err, want)
		}
	}
	if got := s.IssueComments(owner, repo, 7)[0].Reactions; len(got) != 1 || got[0].Content != "eyes" {
		t.Errorf("reactions = %+v", got)
	}
}

func TestPullRequestFilesAndReviewComments(t *testing.T) {
	bothBasePaths(t, func(t *testing.T, opts ...Option) {
		s := seeded(t, opts...)
		gh := client(t, s, "test-token")
		ctx := context.Background()
		files, _, err := gh.PullRequests.ListFiles(ctx, owner, repo, 7, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 2 || files[0].GetPatch() != mainGoPatch || files[0].GetAdditions() != 3 || files[0].GetDeletions() != 1 || files[1].Patch != nil {
			t.Fatalf("files = %+v", files)
		}
		rc, _, err := gh.PullRequests.CreateComment(ctx, owner, repo, 7, &github.PullRequestComment{
			Body: github.Ptr("G104: error not checked"), CommitID: github.Ptr(head), Path: github.Ptr("main.go"),
			Line: github.Ptr(4), Side: github.Ptr("RIGHT"),
		})
		if err != nil {
			t.Fatal(err)
		}
		wantHunk := "@@ -1,5 +1,7 @@\n package main\n \n-import \"fmt\"\n+import (\n+\t\"fmt\""
		if rc.GetDiffHunk() != wantHunk || rc.GetLine() != 4 || rc.GetUser().GetLogin() != "codescan-bot" {
			t.Errorf("comment = hunk %q line %d", rc.GetDiffHunk(), rc.GetLine())
		}
		listed, _, err := gh.PullRequests.ListComments(ctx, owner, repo, 7, nil)
		if err != nil || len(listed) != 1 || listed[0].GetID() != rc.GetID() {
			t.Fatalf("listed %v, err %v", listed, err)
		}
		if got := s.ReviewComments(owner, repo, 7); len(got) != 1 || got[0].Path != "main.go" || got[0].Line != 4 {
			t.Errorf("stored %+v", got)
		}
	})
}

func TestReviewCommentOutsideTheDiffIsRefused(t *testing.T) {
	s := seeded(t)
	gh := client(t, s, "test-token")
	for name, c := range map[string]*github.PullRequestComment{
		"line not in a hunk":           {Line: github.Ptr(40)},
		"no such line on the left":     {Line: github.Ptr(7), Side: github.Ptr("LEFT")},
		"range starting after its end": {Line: github.Ptr(4), StartLine: github.Ptr(5)},
		"file not changed":             {Line: github.Ptr(4), Path: github.Ptr("other.go")},
		"stale commit":                 {Line: github.Ptr(4), CommitID: github.Ptr(strings.Repeat("b", 40))},
	} {
		c.Body = github.Ptr("x")
		if c.CommitID == nil {
			c.CommitID = github.Ptr(head)
		}
		if c.Path == nil {
			c.Path = github.Ptr("main.go")
		}
		_, resp, err := gh.PullRequests.CreateComment(context.Background(), owner, repo, 7, c)
		if err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("valid requests GitHub refuses are not violations: %v", v)
	}
	if n := len(s.ReviewComments(owner, repo, 7)); n != 0 {
		t.Errorf("%d comments stored", n)
	}
}

// TestInvalidRequestIsAViolation checks the contract check catches what
// GitHub's description forbids, and that taking the violations keeps them
// from failing this test.
func TestInvalidRequestIsAViolation(t *testing.T) {
	s := seeded(t)
	gh := client(t, s, "test-token")
	_, resp, err := gh.Repositories.CreateStatus(context.Background(), owner, repo, head, &github.RepoStatus{State: github.Ptr("great")})
	if err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("state great: err = %v", err)
	}
	req, _ := gh.NewRequest(http.MethodGet, "repos/acme/shop/check-runs", nil)
	if resp, err := gh.Do(context.Background(), req, nil); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("undescribed path: err = %v", err)
	}
	got := s.TakeViolations()
	if len(got) != 2 || got[0].Operation != "repos/create-commit-status" || !strings.Contains(got[0].Err, "great") ||
		!strings.Contains(got[1].Err, ErrNotDescribed.Error()) || got[0].Kind != "request" {
		t.Fatalf("violations = %v", got)
	}
	if len(s.Statuses(owner, repo, head)) != 0 {
		t.Error("an invalid request changed the state")
	}
	if len(s.Violations()) != 0 {
		t.Error("TakeViolations did not forget")
	}
}

// recordingTB collects what New reports at cleanup, so the test can check
// that a violation fails a test without failing this one.
type recordingTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recordingTB) Helper()          {}
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestViolationFailsTheTestAtCleanup(t *testing.T) {
	rec := &recordingTB{TB: t}
	s := New(rec)
	s.AddRepo(owner, repo)
	body := strings.NewReader(`{"body": 42}`)
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"repos/acme/shop/issues/1/comments", body)
	req.Header.Set("Authorization", "Bearer test-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("status %d", resp.StatusCode)
	}
	if len(rec.errs) != 0 {
		t.Fatalf("reported before cleanup: %v", rec.errs)
	}
	rec.cleanup()
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "issues/create-comment") {
		t.Fatalf("cleanup reported %v", rec.errs)
	}
}

func TestBadCredentials(t *testing.T) {
	s := New(t, WithToken("good", "bot"))
	for name, auth := range map[string]string{"unknown token": "Bearer nope", "no header": "", "basic": "Basic Z29vZDo="} {
		req, _ := http.NewRequest(http.MethodGet, s.URL()+"user", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), `"message":"Bad credentials"`) ||
			!strings.Contains(string(b), `"documentation_url":"https://docs.github.com/rest"`) {
			t.Errorf("%s: %d %s", name, resp.StatusCode, b)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL()+"user", nil)
	req.Header.Set("Authorization", "token good") // the older scheme
	if resp, err := s.Client().Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("token scheme: %v %v", resp, err)
	}
}

func TestSecondaryRateLimit(t *testing.T) {
	s := New(t)
	s.SecondaryRateLimit(1)
	_, _, err := client(t, s, "test-token").Users.Get(context.Background(), "")
	var abuse *github.AbuseRateLimitError
	if !errors.As(err, &abuse) || abuse.GetRetryAfter() != time.Second || abuse.Response.StatusCode != http.StatusForbidden {
		t.Fatalf("err = %v", err)
	}
	// go-github now refuses locally until Retry-After; a fresh client
	// shows the server itself answers again.
	if _, _, err := client(t, s, "test-token").Users.Get(context.Background(), ""); err != nil {
		t.Errorf("after the limit: %v", err)
	}
}

func TestPrimaryRateLimit(t *testing.T) {
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	t.Run("403", func(t *testing.T) {
		s := New(t)
		s.PrimaryRateLimit(1, http.StatusForbidden, reset)
		_, _, err := client(t, s, "test-token").Users.Get(context.Background(), "")
		var rl *github.RateLimitError
		if !errors.As(err, &rl) || rl.Rate.Remaining != 0 || !rl.Rate.Reset.Time.Equal(reset) || !strings.HasPrefix(rl.Message, "API rate limit exceeded") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("429", func(t *testing.T) {
		s := New(t)
		s.PrimaryRateLimit(2, http.StatusTooManyRequests, reset)
		for range 2 {
			_, resp, err := client(t, s, "test-token").Users.Get(context.Background(), "")
			if err == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("X-RateLimit-Remaining") != "0" {
				t.Fatalf("err = %v", err)
			}
		}
		if _, _, err := client(t, s, "test-token").Users.Get(context.Background(), ""); err != nil {
			t.Errorf("third request: %v", err)
		}
	})
}

func TestEnterpriseServesOnlyUnderPrefix(t *testing.T) {
	s := New(t, WithEnterprise())
	if !strings.HasSuffix(s.URL(), "/api/v3/") {
		t.Fatalf("URL = %s", s.URL())
	}
	req, _ := http.NewRequest(http.MethodGet, s.HostURL()+"/user", nil)
	req.Header.Set("Authorization", "Bearer test-token")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %d", resp.StatusCode)
	}
	if v := s.TakeViolations(); len(v) != 1 || !strings.Contains(v[0].Err, "outside the API base path") {
		t.Errorf("violations = %v", v)
	}
}

func TestValidatorStripsEnterprisePrefix(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/repos/a/b/issues/comments/12", "/api/v3/repos/a/b/issues/comments/12"} {
		r, _ := http.NewRequest(http.MethodPatch, "http://127.0.0.1"+path, nil)
		r.Header.Set("Content-Type", "application/json")
		if err := v.Validate(r, []byte(`{"body":"edited"}`)); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if err := v.Validate(r, []byte(`{}`)); err == nil {
			t.Errorf("%s: body without the required field accepted", path)
		}
	}
	r, _ := http.NewRequest(http.MethodDelete, "http://127.0.0.1/repos/a/b/issues/comments/12", nil)
	if err := v.Validate(r, nil); !errors.Is(err, ErrNotDescribed) {
		t.Errorf("DELETE (not an operation we use): %v", err)
	}
	r, _ = http.NewRequest(http.MethodPatch, "http://127.0.0.1/repos/a/b/issues/comments/twelve", nil)
	if err := v.Validate(r, []byte(`{"body":"x"}`)); err == nil {
		t.Error("a non-integer comment_id was accepted")
	}
}

// TestAnswersAreCheckedAgainstTheDescription shows the server's own answers
// are validated: an issue comment without its user is not GitHub's shape.
func TestAnswersAreCheckedAgainstTheDescription(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/repos/a/b/issues/7/comments", nil)
	op, err := v.Match(r)
	if err != nil {
		t.Fatal(err)
	}
	l := links{api: "http://127.0.0.1", web: "http://127.0.0.1"}
	repo := &repository{owner: "a", name: "b", pulls: map[int]*PullRequest{}}
	good := issueCommentJSON(l, repo, &IssueComment{ID: 1, Issue: 7, Body: "x", User: "bot", userID: 5})
	h := http.Header{}
	setCommonHeaders(h)
	if err := v.ValidateResponse(r, op, http.StatusCreated, h, mustJSON(t, good)); err != nil {
		t.Fatalf("a complete comment: %v", err)
	}
	delete(good, "user")
	if err := v.ValidateResponse(r, op, http.StatusCreated, h, mustJSON(t, good)); err == nil || !strings.Contains(err.Error(), "user") {
		t.Fatalf("a comment without user: %v", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Get a pull request: the head's sha (not the test merge commit's), its
// branches and repository, in GitHub's shape (the answer is validated).
func TestGetPullRequestNamesItsHead(t *testing.T) {
	bothBasePaths(t, func(t *testing.T, opts ...Option) {
		s := New(t, opts...)
		merge := "1111111111111111111111111111111111111111"
		s.AddPullRequest(owner, repo, PullRequest{Number: 9, HeadSHA: head, MergeSHA: merge, HeadRef: "fix/x", BaseRef: "main",
			Files: []File{{Filename: "main.go", Patch: mainGoPatch}}})
		pr, _, err := client(t, s, "test-token").PullRequests.Get(context.Background(), owner, repo, 9)
		if err != nil {
			t.Fatal(err)
		}
		if pr.GetHead().GetSHA() != head || pr.GetHead().GetRef() != "fix/x" || pr.GetBase().GetRef() != "main" ||
			pr.GetMergeCommitSHA() != merge || pr.GetHead().GetRepo().GetFullName() != owner+"/"+repo || pr.GetAdditions() != 3 {
			t.Fatalf("pull request: %+v", pr)
		}
		if _, res, err := client(t, s, "test-token").PullRequests.Get(context.Background(), owner, repo, 10); err == nil || res.StatusCode != http.StatusNotFound {
			t.Fatalf("unknown pull request: %v", err)
		}
	})
}
