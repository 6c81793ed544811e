package gitlabhost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MergeRequest is a merge request the test seeds.
type MergeRequest struct {
	IID          int
	SHA          string // the head commit
	SourceBranch string
	TargetBranch string
}

// Note is a merge request note as the server keeps it.
type Note struct {
	ID        int64
	Body      string
	Author    User
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Status is a commit status as the server keeps it.
type Status struct {
	ID          int64
	SHA         string
	State       string
	Name        string
	Description string
	TargetURL   string
	Author      User
}

type project struct {
	id       int64
	path     string
	mrs      map[int]*mergeRequest
	statuses map[string][]Status // by sha
}

type mergeRequest struct {
	MergeRequest
	notes []Note
}

// AddMergeRequest seeds a merge request of the project at path
// (group/subgroup/name), creating the project.
func (s *Server) AddMergeRequest(path string, mr MergeRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[strings.ToLower(path)]
	if p == nil {
		p = &project{id: int64(100 + len(s.projects)), path: path, mrs: map[int]*mergeRequest{}, statuses: map[string][]Status{}}
		s.projects[strings.ToLower(path)] = p
	}
	p.mrs[mr.IID] = &mergeRequest{MergeRequest: mr}
}

// AddNote seeds a note on a merge request, written by author; it returns
// the note's id.
func (s *Server) AddNote(path string, iid int, author User, body string) int64 {
	id := s.newID()
	s.mu.Lock()
	defer s.mu.Unlock()
	mr := s.projects[strings.ToLower(path)].mrs[iid]
	now := s.now()
	mr.notes = append(mr.notes, Note{ID: id, Body: body, Author: author, CreatedAt: now, UpdatedAt: now})
	return id
}

// Notes returns a merge request's notes, oldest first.
func (s *Server) Notes(path string, iid int) []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.projects[strings.ToLower(path)].mrs[iid].notes)
}

// Statuses returns the statuses set on a commit, in order.
func (s *Server) Statuses(path, sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.projects[strings.ToLower(path)].statuses[sha])
}

// call is one authenticated, validated request.
type call struct {
	r    *http.Request
	body []byte
	op   Operation
	user User
}

// dispatch answers the operation under the state lock: handlers read and
// write the server's state freely.
func (s *Server) dispatch(w http.ResponseWriter, c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch c.op.ID {
	case "getApiV4User":
		writeJSON(w, http.StatusOK, s.userJSON(c.user))
	case "getApiV4ProjectsIdMergeRequestsMergeRequestIid":
		s.getMergeRequest(w, c)
	case "getApiV4ProjectsIdMergeRequestsNoteableIdNotes":
		s.listNotes(w, c)
	case "postApiV4ProjectsIdMergeRequestsNoteableIdNotes":
		s.createNote(w, c)
	case "putApiV4ProjectsIdMergeRequestsNoteableIdNotesNoteId":
		s.updateNote(w, c)
	case "postApiV4ProjectsIdStatusesSha":
		s.setStatus(w, c)
	default:
		writeMessage(w, http.StatusNotFound, "404 Not Found")
	}
}

// project finds the project a request names by id or URL-encoded path.
func (s *Server) project(c *call) *project {
	ref, err := url.PathUnescape(c.op.PathParams["id"])
	if err != nil {
		return nil
	}
	if p := s.projects[strings.ToLower(ref)]; p != nil {
		return p
	}
	for _, p := range s.projects {
		if strconv.FormatInt(p.id, 10) == ref {
			return p
		}
	}
	return nil
}

// mergeRequest finds the merge request a request names (param iid or
// noteable_id), answering GitLab's 404 when there is none.
func (s *Server) mergeRequest(w http.ResponseWriter, c *call, param string) (*project, *mergeRequest, bool) {
	p := s.project(c)
	if p == nil {
		writeMessage(w, http.StatusNotFound, "404 Project Not Found")
		return nil, nil, false
	}
	iid, _ := strconv.Atoi(c.op.PathParams[param])
	mr := p.mrs[iid]
	if mr == nil {
		writeMessage(w, http.StatusNotFound, "404 Not found")
		return nil, nil, false
	}
	return p, mr, true
}

func (s *Server) getMergeRequest(w http.ResponseWriter, c *call) {
	p, mr, ok := s.mergeRequest(w, c, "merge_request_iid")
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": p.id*1000 + int64(mr.IID), "iid": mr.IID, "project_id": p.id, "title": "Merge request", "description": "",
		"state": "opened", "created_at": s.now().Format(time.RFC3339), "updated_at": s.now().Format(time.RFC3339),
		"target_branch": mr.TargetBranch, "source_branch": mr.SourceBranch, "source_project_id": p.id, "target_project_id": p.id,
		"sha": mr.SHA, "merge_commit_sha": nil, "squash_commit_sha": nil, "draft": false, "work_in_progress": false,
		"merge_status": "can_be_merged", "detailed_merge_status": "mergeable", "author": s.userJSON(User{ID: 1, Username: "root"}),
		"diff_refs": map[string]any{"base_sha": nil, "head_sha": mr.SHA, "start_sha": nil},
		"web_url":   fmt.Sprintf("%s%s/%s/-/merge_requests/%d", s.srv.URL, s.root, p.path, mr.IID),
		"references": map[string]string{"short": fmt.Sprintf("!%d", mr.IID), "relative": fmt.Sprintf("!%d", mr.IID),
			"full": fmt.Sprintf("%s!%d", p.path, mr.IID)},
	})
}

// listNotes pages as GitLab does (page, per_page up to 100, X-Next-Page,
// X-Total-Pages, Link), oldest first when asked for sort=asc.
func (s *Server) listNotes(w http.ResponseWriter, c *call) {
	p, mr, ok := s.mergeRequest(w, c, "noteable_id")
	if !ok {
		return
	}
	q := c.r.URL.Query()
	page, per := max(atoiOr(q.Get("page"), 1), 1), min(max(atoiOr(q.Get("per_page"), 20), 1), 100)
	notes := slices.Clone(mr.notes)
	if q.Get("sort") != "asc" {
		slices.Reverse(notes)
	}
	pages := max((len(notes)+per-1)/per, 1)
	from, to := min((page-1)*per, len(notes)), min(page*per, len(notes))
	out := make([]map[string]any, 0, to-from)
	for _, n := range notes[from:to] {
		out = append(out, s.noteJSON(p, mr, n))
	}
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(page))
	h.Set("X-Per-Page", strconv.Itoa(per))
	h.Set("X-Total", strconv.Itoa(len(notes)))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	h.Set("X-Next-Page", "")
	if page < pages {
		h.Set("X-Next-Page", strconv.Itoa(page+1))
		next := *c.r.URL
		nq := next.Query()
		nq.Set("page", strconv.Itoa(page+1))
		next.RawQuery = nq.Encode()
		h.Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, s.srv.URL, next.RequestURI()))
	}
	writeJSON(w, http.StatusOK, out)
}

// maxNote is GitLab's limit of a note's length (characters).
const maxNote = 1_000_000

func (s *Server) createNote(w http.ResponseWriter, c *call) {
	var in struct {
		Body string `json:"body"`
	}
	_ = json.Unmarshal(c.body, &in) // checked by checkParams
	p, mr, ok := s.mergeRequest(w, c, "noteable_id")
	if !ok {
		return
	}
	if msg := noteInvalid(in.Body); msg != "" {
		writeMessage(w, http.StatusBadRequest, msg)
		return
	}
	s.nextID++
	n := Note{ID: s.nextID, Body: in.Body, Author: c.user, CreatedAt: s.now(), UpdatedAt: s.now()}
	mr.notes = append(mr.notes, n)
	writeJSON(w, http.StatusCreated, s.noteJSON(p, mr, n))
}

func (s *Server) updateNote(w http.ResponseWriter, c *call) {
	var in struct {
		Body string `json:"body"`
	}
	_ = json.Unmarshal(c.body, &in)
	p, mr, ok := s.mergeRequest(w, c, "noteable_id")
	if !ok {
		return
	}
	id, _ := strconv.ParseInt(c.op.PathParams["note_id"], 10, 64)
	i := slices.IndexFunc(mr.notes, func(n Note) bool { return n.ID == id })
	switch {
	case i < 0:
		writeMessage(w, http.StatusNotFound, "404 Note Not Found")
		return
	case mr.notes[i].Author.ID != c.user.ID:
		writeMessage(w, http.StatusForbidden, "403 Forbidden")
		return
	}
	if msg := noteInvalid(in.Body); msg != "" {
		writeMessage(w, http.StatusBadRequest, msg)
		return
	}
	mr.notes[i].Body, mr.notes[i].UpdatedAt = in.Body, s.now()
	writeJSON(w, http.StatusOK, s.noteJSON(p, mr, mr.notes[i]))
}

func noteInvalid(body string) string {
	switch {
	case strings.TrimSpace(body) == "":
		return `400 Bad request - Note {:note=>["can't be blank"]}`
	case len([]rune(body)) > maxNote:
		return `400 Bad request - Note {:note=>["is too long (maximum is 1000000 characters)"]}`
	}
	return ""
}

// statusStates are the states GitLab accepts for a commit status.
var statusStates = []string{"pending", "running", "success", "failed", "canceled", "skipped"}

func (s *Server) setStatus(w http.ResponseWriter, c *call) {
	var in struct {
		State, Name, Context, Description, TargetURL string
	}
	var raw map[string]any
	_ = json.Unmarshal(c.body, &raw)
	in.State, in.Name, in.Context = str(raw["state"]), str(raw["name"]), str(raw["context"])
	in.Description, in.TargetURL = str(raw["description"]), str(raw["target_url"])
	p := s.project(c)
	if p == nil {
		writeMessage(w, http.StatusNotFound, "404 Project Not Found")
		return
	}
	sha := c.op.PathParams["sha"]
	if !s.knownCommit(p, sha) {
		writeMessage(w, http.StatusNotFound, "404 Commit Not Found")
		return
	}
	if !slices.Contains(statusStates, in.State) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "state does not have a valid value"})
		return
	}
	name := cmpOr(in.Name, in.Context, "default")
	s.nextID++
	st := Status{ID: s.nextID, SHA: sha, State: in.State, Name: name, Description: in.Description, TargetURL: in.TargetURL, Author: c.user}
	p.statuses[sha] = append(p.statuses[sha], st)
	writeJSON(w, http.StatusCreated, map[string]any{
		"id": st.ID, "sha": sha, "ref": nil, "status": st.State, "name": st.Name, "target_url": nullable(st.TargetURL),
		"description": nullable(st.Description), "created_at": s.now().Format(time.RFC3339), "started_at": nil,
		"finished_at": s.now().Format(time.RFC3339), "allow_failure": false, "coverage": nil, "author": s.userJSON(c.user),
	})
}

// knownCommit: statuses can be set on the head of a merge request only
// (the commits this server knows).
func (s *Server) knownCommit(p *project, sha string) bool {
	for _, mr := range p.mrs {
		if mr.SHA == sha {
			return true
		}
	}
	return false
}

func (s *Server) userJSON(u User) map[string]any {
	return map[string]any{"id": u.ID, "username": u.Username, "name": u.Username, "state": "active", "locked": false,
		"avatar_url": nil, "web_url": s.srv.URL + s.root + "/" + u.Username}
}

func (s *Server) noteJSON(p *project, mr *mergeRequest, n Note) map[string]any {
	return map[string]any{"id": n.ID, "type": nil, "body": n.Body, "attachment": nil, "author": s.userJSON(n.Author),
		"created_at": n.CreatedAt.Format(time.RFC3339Nano), "updated_at": n.UpdatedAt.Format(time.RFC3339Nano), "system": false,
		"noteable_id": p.id*1000 + int64(mr.IID), "noteable_type": "MergeRequest", "project_id": p.id, "noteable_iid": mr.IID,
		"resolvable": false, "confidential": false, "internal": false, "commands_changes": map[string]any{}}
}

// documentedParams are the body parameters GitLab's API documentation
// lists for the operations we call (docs.gitlab.com/api/notes and
// /api/commits#set-the-pipeline-status-of-a-commit), with the required
// ones: the excerpt of the description does not carry the operations'
// body schemas (testdata/README.md), so bodies are held to these.
var documentedParams = map[string]struct{ allowed, required []string }{
	"postApiV4ProjectsIdMergeRequestsNoteableIdNotes":      {[]string{"body", "confidential", "internal", "created_at", "merge_request_diff_head_sha"}, []string{"body"}},
	"putApiV4ProjectsIdMergeRequestsNoteableIdNotesNoteId": {[]string{"body", "confidential"}, []string{"body"}},
	"postApiV4ProjectsIdStatusesSha":                       {[]string{"state", "ref", "name", "context", "target_url", "description", "coverage", "pipeline_id"}, []string{"state"}},
}

// checkParams holds a JSON body to the documented parameters: an object,
// no member GitLab does not document, the required ones present, strings
// where GitLab takes strings.
func checkParams(op string, body []byte) error {
	want, ok := documentedParams[op]
	if !ok {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return fmt.Errorf("the body is not a JSON object")
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(want.allowed, k) {
			return fmt.Errorf("body parameter %q is not one GitLab documents for %s", k, op)
		}
	}
	for _, k := range want.required {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("required body parameter %q is missing", k)
		}
	}
	for _, k := range []string{"body", "state", "name", "context", "target_url", "description", "ref"} {
		if v, ok := m[k]; ok && !bytes.HasPrefix(bytes.TrimSpace(v), []byte(`"`)) {
			return fmt.Errorf("body parameter %q must be a string", k)
		}
	}
	return nil
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
