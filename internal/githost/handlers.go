package githost

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// call is one validated, authenticated request on its way to a handler.
type call struct {
	r    *http.Request
	body []byte
	op   Operation
	user account
}

func (c *call) param(name string) string { return c.op.PathParams[name] }

// intParam reads a path parameter the description declares as an integer;
// validation has already refused anything else.
func (c *call) intParam(name string) int64 {
	n, _ := strconv.ParseInt(c.param(name), 10, 64)
	return n
}

func (c *call) decode(v any) error { return json.Unmarshal(c.body, v) }

type handler func(s *Server, w http.ResponseWriter, c *call)

// handlers maps every operation of the excerpt to its implementation (a test
// checks that none is missing).
var handlers = map[string]handler{
	"users/get-authenticated":            (*Server).getAuthenticated,
	"repos/create-commit-status":         (*Server).createStatus,
	"issues/list-comments":               (*Server).listIssueComments,
	"issues/create-comment":              (*Server).createIssueComment,
	"issues/update-comment":              (*Server).updateIssueComment,
	"pulls/get":                          (*Server).getPull,
	"pulls/list-files":                   (*Server).listFiles,
	"pulls/list-review-comments":         (*Server).listReviewComments,
	"pulls/create-review-comment":        (*Server).createReviewComment,
	"reactions/create-for-issue-comment": (*Server).createReaction,
}

// dispatch runs the operation's handler under the state lock: handlers read
// and write the repositories and must not call methods that lock.
func (s *Server) dispatch(w http.ResponseWriter, c *call) {
	h, ok := handlers[c.op.ID]
	if !ok {
		panic("githost: no handler for described operation " + c.op.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h(s, w, c)
}

// idLocked is newID for code that holds s.mu.
func (s *Server) idLocked() int64 {
	s.nextID++
	return s.nextID
}

// repoOf returns the addressed repository, or answers 404.
func (s *Server) repoOf(w http.ResponseWriter, c *call) (*repository, bool) {
	r, ok := s.repos[repoKey(c.param("owner"), c.param("repo"))]
	if !ok {
		writeError(w, http.StatusNotFound, notFound)
	}
	return r, ok
}

func (s *Server) getAuthenticated(w http.ResponseWriter, c *call) {
	writeJSON(w, http.StatusOK, privateUserJSON(s.links(), c.user, s.now()))
}

// privateUserJSON is GET /user for a token with the user scope.
func privateUserJSON(l links, a account, created time.Time) map[string]any {
	u := l.user(a)
	b, _ := json.Marshal(u)
	m := map[string]any{}
	_ = json.Unmarshal(b, &m)
	for k, v := range map[string]any{
		"user_view_type": "private", "name": nil, "company": nil, "blog": "", "location": nil, "email": nil,
		"hireable": nil, "bio": nil, "twitter_username": nil, "notification_email": nil,
		"public_repos": 0, "public_gists": 0, "followers": 0, "following": 0,
		"created_at": timestamp(created), "updated_at": timestamp(created),
		"private_gists": 0, "total_private_repos": 0, "owned_private_repos": 0, "disk_usage": 0,
		"collaborators": 0, "two_factor_authentication": true,
		"plan": map[string]any{"name": "free", "space": 976562499, "collaborators": 0, "private_repos": 10000},
	} {
		m[k] = v
	}
	return m
}

type statusInput struct {
	State       string  `json:"state"`
	TargetURL   *string `json:"target_url"`
	Description *string `json:"description"`
	Context     *string `json:"context"`
}

func (s *Server) createStatus(w http.ResponseWriter, c *call) {
	r, ok := s.repoOf(w, c)
	if !ok {
		return
	}
	sha := c.param("sha")
	if !r.commits[strings.ToLower(sha)] {
		writeError(w, http.StatusUnprocessableEntity, errorBody{Message: "No commit found for SHA: " + sha, DocumentationURL: docsURL + "/commits/statuses#create-a-commit-status"})
		return
	}
	var in statusInput
	if err := c.decode(&in); err != nil {
		writeValidationFailed(w, err)
		return
	}
	st := &Status{ID: s.idLocked(), SHA: sha, State: in.State, Context: "default", Description: in.Description,
		TargetURL: in.TargetURL, Creator: c.user.login, CreatedAt: s.now()}
	if in.Context != nil {
		st.Context = *in.Context
	}
	r.statuses = append(r.statuses, st)
	l := s.links()
	w.Header().Set("Location", fmt.Sprintf("%s/repos/%s/%s/statuses/%s", l.api, r.owner, r.name, sha))
	writeJSON(w, http.StatusCreated, statusJSON(l, r, st, c.user))
}

func statusJSON(l links, r *repository, st *Status, creator account) map[string]any {
	u := l.user(creator)
	return map[string]any{
		"url": fmt.Sprintf("%s/repos/%s/%s/statuses/%s", l.api, r.owner, r.name, st.SHA), "avatar_url": u.AvatarURL,
		"id": st.ID, "node_id": nodeID("SC_", st.ID), "state": st.State, "description": st.Description,
		"target_url": st.TargetURL, "context": st.Context, "created_at": timestamp(st.CreatedAt),
		"updated_at": timestamp(st.CreatedAt), "creator": u,
	}
}

// issueOf returns the addressed repository and checks the issue exists.
func (s *Server) issueOf(w http.ResponseWriter, c *call) (*repository, int, bool) {
	r, ok := s.repoOf(w, c)
	if !ok {
		return nil, 0, false
	}
	n := int(c.intParam("issue_number"))
	if !r.issues[n] {
		writeError(w, http.StatusNotFound, notFound)
		return nil, 0, false
	}
	return r, n, true
}

func (s *Server) listIssueComments(w http.ResponseWriter, c *call) {
	r, n, ok := s.issueOf(w, c)
	if !ok {
		return
	}
	since, _ := time.Parse(time.RFC3339, c.r.URL.Query().Get("since"))
	var all []*IssueComment
	for _, cm := range r.comments {
		if cm.Issue == n && !cm.UpdatedAt.Before(since) {
			all = append(all, cm)
		}
	}
	l := s.links()
	out := []map[string]any{}
	for _, cm := range paginate(w, c.r, s.srv.URL, all) {
		out = append(out, issueCommentJSON(l, r, cm))
	}
	writeJSON(w, http.StatusOK, out)
}

// checkCommentBody refuses what GitHub refuses in a comment body.
func checkCommentBody(w http.ResponseWriter, resource, body string) bool {
	switch {
	case strings.TrimSpace(body) == "":
		writeUnprocessable(w, fieldError{Resource: resource, Code: "missing_field", Field: "body"})
	case utf8.RuneCountInString(body) > 65536:
		writeUnprocessable(w, fieldError{Resource: resource, Code: "custom", Field: "body", Message: "body is too long (maximum is 65536 characters)"})
	default:
		return true
	}
	return false
}

func (s *Server) createIssueComment(w http.ResponseWriter, c *call) {
	r, n, ok := s.issueOf(w, c)
	if !ok {
		return
	}
	var in struct{ Body string }
	if err := c.decode(&in); err != nil {
		writeValidationFailed(w, err)
		return
	}
	if !checkCommentBody(w, "IssueComment", in.Body) {
		return
	}
	now := s.now()
	cm := &IssueComment{ID: s.idLocked(), Issue: n, Body: in.Body, User: c.user.login, userID: c.user.id, CreatedAt: now, UpdatedAt: now}
	r.comments = append(r.comments, cm)
	l := s.links()
	w.Header().Set("Location", fmt.Sprintf("%s/repos/%s/%s/issues/comments/%d", l.api, r.owner, r.name, cm.ID))
	writeJSON(w, http.StatusCreated, issueCommentJSON(l, r, cm))
}

// commentOf finds the addressed issue comment, or answers 404.
func (s *Server) commentOf(w http.ResponseWriter, c *call) (*repository, *IssueComment, bool) {
	r, ok := s.repoOf(w, c)
	if !ok {
		return nil, nil, false
	}
	id := c.intParam("comment_id")
	for _, cm := range r.comments {
		if cm.ID == id {
			return r, cm, true
		}
	}
	writeError(w, http.StatusNotFound, notFound)
	return nil, nil, false
}

func (s *Server) updateIssueComment(w http.ResponseWriter, c *call) {
	r, cm, ok := s.commentOf(w, c)
	if !ok {
		return
	}
	var in struct{ Body string }
	if err := c.decode(&in); err != nil {
		writeValidationFailed(w, err)
		return
	}
	if !checkCommentBody(w, "IssueComment", in.Body) {
		return
	}
	cm.Body = in.Body
	cm.UpdatedAt = s.now()
	writeJSON(w, http.StatusOK, issueCommentJSON(s.links(), r, cm))
}

func issueCommentJSON(l links, r *repository, cm *IssueComment) map[string]any {
	kind := "issues"
	if r.pulls[cm.Issue] != nil {
		kind = "pull"
	}
	api := fmt.Sprintf("%s/repos/%s/%s", l.api, r.owner, r.name)
	return map[string]any{
		"id": cm.ID, "node_id": nodeID("IC_", cm.ID), "url": fmt.Sprintf("%s/issues/comments/%d", api, cm.ID),
		"html_url": fmt.Sprintf("%s/%s/%s/%s/%d#issuecomment-%d", l.web, r.owner, r.name, kind, cm.Issue, cm.ID),
		"body":     cm.Body, "user": l.user(account{id: cm.userID, login: cm.User}),
		"created_at": timestamp(cm.CreatedAt), "updated_at": timestamp(cm.UpdatedAt),
		"issue_url": fmt.Sprintf("%s/issues/%d", api, cm.Issue), "author_association": "NONE",
		"performed_via_github_app": nil, "reactions": rollup(fmt.Sprintf("%s/issues/comments/%d/reactions", api, cm.ID), cm.Reactions),
	}
}

// rollup is reaction-rollup: the count per reaction content.
func rollup(url string, rs []Reaction) map[string]any {
	m := map[string]any{"url": url, "total_count": len(rs)}
	for _, k := range []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket"} {
		m[k] = 0
	}
	for _, x := range rs {
		m[x.Content] = m[x.Content].(int) + 1
	}
	return m
}

func (s *Server) createReaction(w http.ResponseWriter, c *call) {
	_, cm, ok := s.commentOf(w, c)
	if !ok {
		return
	}
	var in struct{ Content string }
	if err := c.decode(&in); err != nil {
		writeValidationFailed(w, err)
		return
	}
	// The same user adding the same reaction again gets the existing one, 200.
	for _, x := range cm.Reactions {
		if x.userID == c.user.id && x.Content == in.Content {
			writeJSON(w, http.StatusOK, reactionJSON(s.links(), x))
			return
		}
	}
	x := Reaction{ID: s.idLocked(), Content: in.Content, User: c.user.login, userID: c.user.id, CreatedAt: s.now()}
	cm.Reactions = append(cm.Reactions, x)
	writeJSON(w, http.StatusCreated, reactionJSON(s.links(), x))
}

func reactionJSON(l links, x Reaction) map[string]any {
	return map[string]any{"id": x.ID, "node_id": nodeID("REA_", x.ID), "user": l.user(account{id: x.userID, login: x.User}),
		"content": x.Content, "created_at": timestamp(x.CreatedAt)}
}
