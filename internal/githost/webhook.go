package githost

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// HookID is the webhook id SignedEvent puts in X-GitHub-Hook-ID.
const HookID = 4242

// SignedEvent encodes payload as GitHub delivers a webhook and returns the
// body with the headers of the delivery: X-GitHub-Event, a fresh
// X-GitHub-Delivery GUID, X-Hub-Signature-256 ("sha256=" and the hex HMAC
// of the exact body with secret; X-Hub-Signature is its legacy SHA-1
// sibling, sent only when a secret is set), the hook and target ids, and
// GitHub's User-Agent. A []byte or json.RawMessage payload is sent as is.
func SignedEvent(secret []byte, event string, payload any) (body []byte, headers http.Header) {
	body = encodePayload(payload)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "GitHub-Hookshot/5a2f1c7")
	h.Set("X-GitHub-Event", event)
	h.Set("X-GitHub-Delivery", uuid.NewString())
	h.Set("X-GitHub-Hook-ID", strconv.Itoa(HookID))
	if id, ok := repositoryID(body); ok {
		h.Set("X-GitHub-Hook-Installation-Target-ID", strconv.FormatInt(id, 10))
		h.Set("X-GitHub-Hook-Installation-Target-Type", "repository")
	}
	if len(secret) > 0 {
		h.Set("X-Hub-Signature", "sha1="+hexHMAC(sha1.New, secret, body))
		h.Set("X-Hub-Signature-256", "sha256="+hexHMAC(sha256.New, secret, body))
	}
	return body, h
}

func encodePayload(payload any) []byte {
	switch p := payload.(type) {
	case []byte:
		return p
	case json.RawMessage:
		return p
	}
	b, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("githost: webhook payload is not JSON: %v", err))
	}
	return b
}

func hexHMAC(h func() hash.Hash, secret, body []byte) string {
	mac := hmac.New(h, secret)
	mac.Write(body) // a hash.Hash never fails to write
	return hex.EncodeToString(mac.Sum(nil))
}

// repositoryID reads repository.id, which GitHub also sends as the hook's
// installation target for repository webhooks.
func repositoryID(body []byte) (int64, bool) {
	var p struct {
		Repository *struct {
			ID int64 `json:"id"`
		} `json:"repository"`
	}
	if json.Unmarshal(body, &p) != nil || p.Repository == nil {
		return 0, false
	}
	return p.Repository.ID, true
}

// WebhookRequest is a POST of the signed event to url, ready to be sent or
// handed to a handler.
func WebhookRequest(url string, secret []byte, event string, payload any) (*http.Request, error) {
	body, h := SignedEvent(secret, event, payload)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = h
	return req, nil
}

// IssueCommentEvent describes an issue_comment "created" delivery.
type IssueCommentEvent struct {
	Owner, Repo string
	RepoID      int64
	Number      int  // issue or pull request number
	PullRequest bool // the conversation is a pull request's (the issue carries "pull_request")
	CommentID   int64
	Body        string
	Login       string // the comment's author, also the sender
	UserID      int64
	OwnerID     int64     // the repository owner's id; UserID when zero
	At          time.Time // created_at and updated_at
	// WebURL and APIURL default to github.com's; a GitHub Enterprise
	// delivery carries https://HOST and https://HOST/api/v3.
	WebURL, APIURL string
}

func (e IssueCommentEvent) withDefaults() IssueCommentEvent {
	if e.WebURL == "" {
		e.WebURL = "https://github.com"
	}
	if e.APIURL == "" {
		e.APIURL = "https://api.github.com"
	}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	if e.OwnerID == 0 {
		e.OwnerID = e.UserID
	}
	e.WebURL, e.APIURL = strings.TrimRight(e.WebURL, "/"), strings.TrimRight(e.APIURL, "/")
	return e
}

// IssueCommentCreated builds the payload GitHub sends for a new comment on
// an issue or pull request conversation: action, issue (with the
// "pull_request" key when it is a pull request), comment, repository and
// sender. It is a repository webhook's payload: no "installation" (only
// GitHub Apps get one) and no "organization" (the owner is a user).
func IssueCommentCreated(e IssueCommentEvent) map[string]any {
	e = e.withDefaults()
	l := links{api: e.APIURL, web: e.WebURL}
	user := l.user(account{id: e.UserID, login: e.Login})
	return map[string]any{
		"action":     "created",
		"issue":      eventIssue(e, l, user),
		"comment":    eventComment(e, l, user),
		"repository": eventRepository(e, l),
		"sender":     user,
	}
}

func eventIssue(e IssueCommentEvent, l links, user userJSON) map[string]any {
	api := fmt.Sprintf("%s/repos/%s/%s/issues/%d", l.api, e.Owner, e.Repo, e.Number)
	kind := "issues"
	if e.PullRequest {
		kind = "pull"
	}
	html := fmt.Sprintf("%s/%s/%s/%s/%d", l.web, e.Owner, e.Repo, kind, e.Number)
	issueID := int64(e.Number) + 9_000_000
	m := map[string]any{
		"url": api, "repository_url": fmt.Sprintf("%s/repos/%s/%s", l.api, e.Owner, e.Repo),
		"labels_url": api + "/labels{/name}", "comments_url": api + "/comments", "events_url": api + "/events",
		"html_url": html, "id": issueID, "node_id": nodeID("I_", issueID), "number": e.Number,
		"title": "Change under review", "user": user, "labels": []any{}, "state": "open", "locked": false,
		"assignee": nil, "assignees": []any{}, "milestone": nil, "comments": 1,
		"created_at": timestamp(e.At.Add(-time.Hour)), "updated_at": timestamp(e.At), "closed_at": nil,
		"author_association": "OWNER", "active_lock_reason": nil, "body": nil, "draft": false,
		"reactions": rollup(api+"/reactions", nil), "timeline_url": api + "/timeline",
		"performed_via_github_app": nil, "state_reason": nil,
	}
	if e.PullRequest {
		pull := fmt.Sprintf("%s/repos/%s/%s/pulls/%d", l.api, e.Owner, e.Repo, e.Number)
		m["pull_request"] = map[string]any{"url": pull, "html_url": html, "diff_url": html + ".diff", "patch_url": html + ".patch", "merged_at": nil}
	}
	return m
}

func eventComment(e IssueCommentEvent, l links, user userJSON) map[string]any {
	api := fmt.Sprintf("%s/repos/%s/%s", l.api, e.Owner, e.Repo)
	kind := "issues"
	if e.PullRequest {
		kind = "pull"
	}
	return map[string]any{
		"url":       fmt.Sprintf("%s/issues/comments/%d", api, e.CommentID),
		"html_url":  fmt.Sprintf("%s/%s/%s/%s/%d#issuecomment-%d", l.web, e.Owner, e.Repo, kind, e.Number, e.CommentID),
		"issue_url": fmt.Sprintf("%s/issues/%d", api, e.Number), "id": e.CommentID, "node_id": nodeID("IC_", e.CommentID),
		"user": user, "created_at": timestamp(e.At), "updated_at": timestamp(e.At), "author_association": "OWNER",
		"body": e.Body, "reactions": rollup(fmt.Sprintf("%s/issues/comments/%d/reactions", api, e.CommentID), nil),
		"performed_via_github_app": nil,
	}
}

func eventRepository(e IssueCommentEvent, l links) map[string]any {
	api := fmt.Sprintf("%s/repos/%s/%s", l.api, e.Owner, e.Repo)
	web := fmt.Sprintf("%s/%s/%s", l.web, e.Owner, e.Repo)
	host := strings.TrimPrefix(strings.TrimPrefix(l.web, "https://"), "http://")
	m := map[string]any{
		"id": e.RepoID, "node_id": nodeID("R_", e.RepoID), "name": e.Repo, "full_name": e.Owner + "/" + e.Repo,
		"private": true, "owner": l.user(account{id: e.OwnerID, login: e.Owner}), "html_url": web, "description": nil,
		"fork": false, "url": api, "created_at": timestamp(e.At.Add(-30 * 24 * time.Hour)), "updated_at": timestamp(e.At),
		"pushed_at": timestamp(e.At), "git_url": "git://" + host + "/" + e.Owner + "/" + e.Repo + ".git",
		"ssh_url": "git@" + host + ":" + e.Owner + "/" + e.Repo + ".git", "clone_url": web + ".git", "svn_url": web,
		"homepage": nil, "size": 0, "stargazers_count": 0, "watchers_count": 0, "language": "Go",
		"has_issues": true, "has_projects": true, "has_downloads": true, "has_wiki": true, "has_pages": false,
		"has_discussions": false, "forks_count": 0, "mirror_url": nil, "archived": false, "disabled": false,
		"open_issues_count": 1, "license": nil, "allow_forking": true, "is_template": false,
		"web_commit_signoff_required": false, "topics": []any{}, "visibility": "private", "forks": 0,
		"open_issues": 1, "watchers": 0, "default_branch": "main",
	}
	for k, suffix := range repoURLTemplates {
		m[k] = api + suffix
	}
	return m
}

// repoURLTemplates are the *_url fields of a repository object.
var repoURLTemplates = map[string]string{
	"forks_url": "/forks", "keys_url": "/keys{/key_id}", "collaborators_url": "/collaborators{/collaborator}",
	"teams_url": "/teams", "hooks_url": "/hooks", "issue_events_url": "/issues/events{/number}", "events_url": "/events",
	"assignees_url": "/assignees{/user}", "branches_url": "/branches{/branch}", "tags_url": "/tags",
	"blobs_url": "/git/blobs{/sha}", "git_tags_url": "/git/tags{/sha}", "git_refs_url": "/git/refs{/sha}",
	"trees_url": "/git/trees{/sha}", "statuses_url": "/statuses/{sha}", "languages_url": "/languages",
	"stargazers_url": "/stargazers", "contributors_url": "/contributors", "subscribers_url": "/subscribers",
	"subscription_url": "/subscription", "commits_url": "/commits{/sha}", "git_commits_url": "/git/commits{/sha}",
	"comments_url": "/comments{/number}", "issue_comment_url": "/issues/comments{/number}",
	"contents_url": "/contents/{+path}", "compare_url": "/compare/{base}...{head}", "merges_url": "/merges",
	"archive_url": "/{archive_format}{/ref}", "downloads_url": "/downloads", "issues_url": "/issues{/number}",
	"pulls_url": "/pulls{/number}", "milestones_url": "/milestones{/number}",
	"notifications_url": "/notifications{?since,all,participating}", "labels_url": "/labels{/name}",
	"releases_url": "/releases{/id}", "deployments_url": "/deployments",
}
