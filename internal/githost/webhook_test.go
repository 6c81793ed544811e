package githost

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/google/go-github/v72/github"
	"github.com/google/uuid"
)

func commentEvent() IssueCommentEvent {
	return IssueCommentEvent{
		Owner: "acme", Repo: "shop", RepoID: 42, Number: 7, PullRequest: true, CommentID: 99,
		Body: "/codescan rescan", Login: "alice", UserID: 5, At: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
	}
}

func TestSignedEventIsSignedAsGitHubSigns(t *testing.T) {
	secret := []byte("s3cret")
	body, h := SignedEvent(secret, "issue_comment", IssueCommentCreated(commentEvent()))
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); h.Get("X-Hub-Signature-256") != want {
		t.Errorf("X-Hub-Signature-256 = %q, want %q", h.Get("X-Hub-Signature-256"), want)
	}
	if _, err := uuid.Parse(h.Get("X-GitHub-Delivery")); err != nil {
		t.Errorf("X-GitHub-Delivery: %v", err)
	}
	if _, h2 := SignedEvent(secret, "issue_comment", body); h2.Get("X-GitHub-Delivery") == h.Get("X-GitHub-Delivery") {
		t.Error("two deliveries share an id")
	}
	if h.Get("X-GitHub-Event") != "issue_comment" || h.Get("X-GitHub-Hook-Installation-Target-ID") != "42" {
		t.Errorf("headers = %v", h)
	}
	for name, tc := range map[string]struct {
		body   []byte
		secret []byte
	}{
		"tampered body": {append(bytes.Clone(body), ' '), secret},
		"wrong secret":  {body, []byte("other")},
	} {
		if _, err := github.ValidatePayloadFromBody("application/json", bytes.NewReader(tc.body), h.Get("X-Hub-Signature-256"), tc.secret); err == nil {
			t.Errorf("%s: signature accepted", name)
		}
	}
}

// TestIssueCommentCreatedParsesAsGitHubs checks the built delivery through
// go-github's own webhook code: signature check, event type, payload shape.
func TestIssueCommentCreatedParsesAsGitHubs(t *testing.T) {
	secret := []byte("s3cret")
	req, err := WebhookRequest("http://127.0.0.1/hooks/github/int-1", secret, "issue_comment", IssueCommentCreated(commentEvent()))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := github.ValidatePayload(req, secret)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := github.ParseWebHook(github.WebHookType(req), payload)
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := parsed.(*github.IssueCommentEvent)
	if !ok {
		t.Fatalf("parsed as %T", parsed)
	}
	switch {
	case ev.GetAction() != "created", !ev.GetIssue().IsPullRequest(), ev.GetIssue().GetNumber() != 7:
		t.Errorf("issue = %+v", ev.GetIssue())
	case ev.GetComment().GetID() != 99, ev.GetComment().GetBody() != "/codescan rescan", ev.GetComment().GetUser().GetLogin() != "alice":
		t.Errorf("comment = %+v", ev.GetComment())
	case ev.GetComment().GetHTMLURL() != "https://github.com/acme/shop/pull/7#issuecomment-99":
		t.Errorf("html_url = %s", ev.GetComment().GetHTMLURL())
	case ev.GetRepo().GetFullName() != "acme/shop", ev.GetSender().GetLogin() != "alice":
		t.Errorf("repository %q sender %q", ev.GetRepo().GetFullName(), ev.GetSender().GetLogin())
	case ev.Installation != nil:
		t.Error("a repository webhook carries no installation")
	}
}

func TestPlainIssueHasNoPullRequestKey(t *testing.T) {
	e := commentEvent()
	e.PullRequest = false
	issue := IssueCommentCreated(e)["issue"].(map[string]any)
	if _, ok := issue["pull_request"]; ok {
		t.Error("an issue's payload has pull_request")
	}
}

func TestSignedEventWithoutSecretIsUnsigned(t *testing.T) {
	_, h := SignedEvent(nil, "ping", map[string]any{"zen": "Keep it logically awesome."})
	if h.Get("X-Hub-Signature-256") != "" || h.Get("X-Hub-Signature") != "" {
		t.Errorf("signed without a secret: %v", h)
	}
}
