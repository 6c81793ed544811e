package integrations

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/prtriage"
	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/store/schema"
)

// The headers of a GitLab webhook delivery. GitLab sends the hook's
// secret token as is (no signature of the body), so the token is the
// delivery's credential; the route must be reached over TLS.
const (
	GitLabTokenHeader    = "X-Gitlab-Token"
	GitLabEventHeader    = "X-Gitlab-Event"
	GitLabDeliveryHeader = "X-Gitlab-Event-UUID"
	// gitLabNoteHook is the X-Gitlab-Event of a comment (a note).
	gitLabNoteHook = "Note Hook"
)

// hookToken is the one X-Gitlab-Token value.
func hookToken(values []string) (string, bool) {
	if len(values) != 1 || values[0] == "" {
		return "", false
	}
	return values[0], true
}

// tokenMatches compares a delivery's token with the webhook secret in
// constant time (digests first, so not even the length leaks).
func tokenMatches(secret []byte, token string) bool {
	a, b := sha256.Sum256(secret), sha256.Sum256([]byte(token))
	return hmac.Equal(a[:], b[:])
}

// noteEvent is what is read of a GitLab note hook delivery.
type noteEvent struct {
	ObjectKind string `json:"object_kind"`
	Project    struct {
		PathWithNamespace string `json:"path_with_namespace"`
		WebURL            string `json:"web_url"`
	} `json:"project"`
	User struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
	} `json:"user"`
	Note struct {
		ID           int64    `json:"id"`
		Body         string   `json:"note"`
		NoteableType string   `json:"noteable_type"`
		AuthorID     int64    `json:"author_id"`
		System       bool     `json:"system"`
		Action       string   `json:"action"`
		CreatedAt    hookTime `json:"created_at"`
	} `json:"object_attributes"`
	MergeRequest *struct {
		IID int `json:"iid"`
	} `json:"merge_request"`
}

// hookTime reads the times of GitLab's webhook payloads: "2015-05-17
// 18:21:36 UTC" (older payloads) or RFC 3339.
type hookTime struct{ time.Time }

func (t *hookTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	for _, layout := range []string{"2006-01-02 15:04:05 MST", "2006-01-02 15:04:05 -0700", time.RFC3339Nano} {
		if v, err := time.Parse(layout, s); err == nil {
			t.Time = v
			return nil
		}
	}
	return fmt.Errorf("unreadable time %q", s)
}

// gitLabPath is a project's full path: groups and name, each of GitLab's
// path characters (at most 512 bytes, 20 levels: checked beside it).
var gitLabPath = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+$`)

// gitlabCommand reads a note hook delivery's command: a new note on a
// merge request the integration decorates, not the integration's own,
// not older than MaxCommandAge, that holds a /codescan command.
func (h handlers) gitlabCommand(r *http.Request, in schema.Integration, body []byte) (incoming, string, error) {
	if r.Header.Get(GitLabEventHeader) != gitLabNoteHook {
		return incoming{}, prtriage.Ignored, nil
	}
	var ev noteEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return incoming{}, "", httpapi.ErrInvalidJSON
	}
	c, ok := h.noteCommand(in, ev)
	if !ok {
		return incoming{}, prtriage.Ignored, nil
	}
	if !deliveryPattern.MatchString(r.Header.Get(GitLabDeliveryHeader)) {
		return incoming{}, "", httpapi.Invalid("%s must be the host's delivery id", GitLabDeliveryHeader)
	}
	post := func(ctx context.Context, o prtriage.Outcome) error { return h.postNote(ctx, in, ev, c, o) }
	return incoming{cmd: c, commentID: ev.Note.ID, reply: post}, "", nil
}

// noteCommand is commandOf for GitLab's notes.
func (h handlers) noteCommand(in schema.Integration, ev noteEvent) (command, bool) {
	mr, path := ev.MergeRequest, ev.Project.PathWithNamespace
	if ev.ObjectKind != "note" || ev.Note.NoteableType != "MergeRequest" || mr == nil ||
		ev.Note.System || (ev.Note.Action != "" && ev.Note.Action != "create") ||
		len(path) > 512 || strings.Count(path, "/") >= 20 || !gitLabPath.MatchString(path) || hasDotSegment(path) {
		return command{}, false
	}
	return h.commandIn(in, hostComment{
		provider: pullrequest.GitLab, webURL: ev.Project.WebURL, repo: path, number: mr.IID,
		id: ev.Note.ID, authorID: ev.Note.AuthorID, login: ev.User.Username, body: ev.Note.Body, createdAt: ev.Note.CreatedAt.Time,
	})
}

func hasDotSegment(path string) bool {
	for s := range strings.SplitSeq(path, "/") {
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}

// postNote answers a command on the merge request with a note: GitLab's
// answer to a carried-out command too (an emoji reaction on the note is
// not in the operations vetted against GitLab's description).
func (h handlers) postNote(ctx context.Context, in schema.Integration, ev noteEvent, c command, o prtriage.Outcome) error {
	token, err := h.hostToken(ctx, in)
	if err != nil {
		return err
	}
	gl, err := h.host.GitLab(in.BaseURL, in.GatewayPrefix, token)
	if err != nil {
		return err
	}
	body := o.Reply
	if body == "" {
		body = doneReply(c.req.Command)
	}
	_, _, err = gl.Notes.CreateMergeRequestNote(ev.Project.PathWithNamespace, int64(ev.MergeRequest.IID),
		&gitlab.CreateMergeRequestNoteOptions{Body: &body}, gitlab.WithContext(ctx))
	return err
}

// doneReply is the answer to a command carried out (GitHub's is a
// reaction).
func doneReply(cmd prtriage.Command) string {
	return prtriage.ReplyMarker + "\n" + fmt.Sprintf("👍 Finding `%s` is now `%s`.", cmd.Ref, cmd.Status())
}
