package gitlabhost

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The headers of a GitLab webhook delivery.
const (
	TokenHeader     = "X-Gitlab-Token"
	EventHeader     = "X-Gitlab-Event"
	EventUUIDHeader = "X-Gitlab-Event-UUID"
	// NoteHook is the X-Gitlab-Event of a comment (note).
	NoteHook = "Note Hook"
)

// NoteEvent is what a note hook delivery says.
type NoteEvent struct {
	ProjectPath string // group/subgroup/name
	IID         int    // the merge request (0: a note on an issue)
	NoteID      int64
	Author      User
	Body        string
	CreatedAt   time.Time
}

// hookTime is the time format of GitLab's webhook payloads.
const hookTime = "2006-01-02 15:04:05 MST"

// Payload is the JSON body GitLab sends for a note: its documented shape
// (docs.gitlab.com/user/project/integrations/webhook_events, "Comment
// events"), cut to what a receiver reads and what identifies the note.
func (s *Server) Payload(e NoteEvent) []byte {
	projectURL := fmt.Sprintf("%s%s/%s", s.srv.URL, s.root, e.ProjectPath)
	name := e.ProjectPath[strings.LastIndex(e.ProjectPath, "/")+1:]
	ts := e.CreatedAt.UTC().Format(hookTime)
	noteable := "MergeRequest"
	if e.IID == 0 {
		noteable = "Issue"
	}
	body := map[string]any{
		"object_kind": "note", "event_type": "note",
		"user":       map[string]any{"id": e.Author.ID, "name": e.Author.Username, "username": e.Author.Username, "avatar_url": nil, "email": "[REDACTED]"},
		"project_id": 100,
		"project": map[string]any{"id": 100, "name": name, "web_url": projectURL, "path_with_namespace": e.ProjectPath,
			"namespace": e.ProjectPath[:max(strings.LastIndex(e.ProjectPath, "/"), 0)], "default_branch": "main",
			"git_http_url": projectURL + ".git", "visibility_level": 0},
		"object_attributes": map[string]any{"id": e.NoteID, "note": e.Body, "noteable_type": noteable, "author_id": e.Author.ID,
			"created_at": ts, "updated_at": ts, "project_id": 100, "system": false, "action": "create",
			"url": fmt.Sprintf("%s/-/merge_requests/%d#note_%d", projectURL, e.IID, e.NoteID)},
	}
	if e.IID > 0 {
		body["merge_request"] = map[string]any{"iid": e.IID, "source_branch": "fix", "target_branch": "main", "state": "opened",
			"source_project_id": 100, "target_project_id": 100}
	}
	out, _ := json.Marshal(body)
	return out
}

// Headers are a note hook delivery's headers with the hook's secret token
// (GitLab sends it as is; the receiver compares it).
func Headers(token string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(EventHeader, NoteHook)
	h.Set(EventUUIDHeader, uuid.NewString())
	h.Set("User-Agent", "GitLab/19.5.0")
	if token != "" {
		h.Set(TokenHeader, token)
	}
	return h
}
