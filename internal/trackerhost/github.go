package trackerhost

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// GitHub is a loopback GitHub host of issues.
type GitHub struct {
	base
	token, login string
	repos        map[string][]*GHIssue // owner/repo → issues, by number - 1
	nextID       int64
}

// GHIssue is an issue the host keeps.
type GHIssue struct {
	Number      int
	Title, Body string
	Labels      []string
	State       string // open, closed
	StateReason string // completed, not_planned, reopened
	Comments    []string
	Author      string
}

// NewGitHub starts a host that accepts token as login's.
func NewGitHub(t testing.TB, token, login string) *GitHub {
	t.Helper()
	g := &GitHub{token: token, login: login, repos: map[string][]*GHIssue{}, nextID: 5_000_000}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues", g.create)
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{number}", g.get)
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/{number}", g.update)
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{number}/comments", g.comments)
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/comments", g.comment)
	mux.HandleFunc("GET /search/issues", g.search)
	g.start(t, NewGitHubValidator, g.authorized(mux))
	return g
}

func (g *GitHub) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+g.token {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func repoOf(r *http.Request) string { return r.PathValue("owner") + "/" + r.PathValue("repo") }

// Issues are a repository's issues, by number.
func (g *GitHub) Issues(repo string) []GHIssue {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]GHIssue, 0, len(g.repos[repo]))
	for _, i := range g.repos[repo] {
		c := *i
		c.Comments = append([]string(nil), i.Comments...)
		out = append(out, c)
	}
	return out
}

// SetState changes an issue as a person on the host would.
func (g *GitHub) SetState(repo string, number int, state, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := g.repos[repo][number-1]
	i.State, i.StateReason = state, reason
}

func (g *GitHub) find(w http.ResponseWriter, r *http.Request) *GHIssue {
	n, err := strconv.Atoi(r.PathValue("number"))
	list := g.repos[repoOf(r)]
	if err != nil || n < 1 || n > len(list) {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
		return nil
	}
	return list[n-1]
}

func (g *GitHub) view(repo string, i *GHIssue) map[string]any {
	labels := []map[string]any{}
	for n, l := range i.Labels {
		labels = append(labels, map[string]any{"id": n + 1, "node_id": "L", "url": "", "name": l, "color": "ededed", "default": false, "description": nil})
	}
	u := g.srv.URL + "/repos/" + repo + "/issues/" + strconv.Itoa(i.Number)
	var reason any
	if i.StateReason != "" {
		reason = i.StateReason
	}
	now := time.Now().UTC().Format(time.RFC3339)
	return map[string]any{"id": g.nextID + int64(i.Number), "node_id": "I", "number": i.Number, "title": i.Title, "body": i.Body,
		"state": i.State, "state_reason": reason, "labels": labels, "url": u, "html_url": "https://github.com/" + repo + "/issues/" + strconv.Itoa(i.Number),
		"repository_url": g.srv.URL + "/repos/" + repo, "labels_url": u + "/labels{/name}", "comments_url": u + "/comments", "events_url": u + "/events",
		"user": map[string]any{"login": i.Author, "id": 1}, "comments": len(i.Comments), "created_at": now, "updated_at": now,
		"locked": false, "assignee": nil, "milestone": nil, "closed_at": nil, "author_association": "NONE"}
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return false
	}
	return true
}

func (g *GitHub) create(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title  string   `json:"title"`
		Body   string   `json:"body"`
		Labels []string `json:"labels"`
	}
	if !decode(w, r, &in) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	repo := repoOf(r)
	i := &GHIssue{Number: len(g.repos[repo]) + 1, Title: in.Title, Body: in.Body, Labels: in.Labels, State: "open", Author: g.login}
	g.repos[repo] = append(g.repos[repo], i)
	writeJSON(w, http.StatusCreated, g.view(repo, i))
}

func (g *GitHub) get(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := g.find(w, r); i != nil {
		writeJSON(w, http.StatusOK, g.view(repoOf(r), i))
	}
}

func (g *GitHub) update(w http.ResponseWriter, r *http.Request) {
	var in struct {
		State       *string `json:"state"`
		StateReason *string `json:"state_reason"`
		Body        *string `json:"body"`
	}
	if !decode(w, r, &in) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	i := g.find(w, r)
	if i == nil {
		return
	}
	if in.State != nil {
		i.State, i.StateReason = *in.State, ""
	}
	if in.StateReason != nil {
		i.StateReason = *in.StateReason
	}
	if in.Body != nil {
		i.Body = *in.Body
	}
	writeJSON(w, http.StatusOK, g.view(repoOf(r), i))
}

func (g *GitHub) comments(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := g.find(w, r)
	if i == nil {
		return
	}
	out := []map[string]any{}
	for n, c := range i.Comments {
		out = append(out, map[string]any{"id": n + 1, "body": c, "user": map[string]any{"login": g.login, "id": 1}})
	}
	writeJSON(w, http.StatusOK, out)
}

func (g *GitHub) comment(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Body string `json:"body"`
	}
	if !decode(w, r, &in) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	i := g.find(w, r)
	if i == nil {
		return
	}
	i.Comments = append(i.Comments, in.Body)
	now := time.Now().UTC().Format(time.RFC3339)
	writeJSON(w, http.StatusCreated, map[string]any{"id": len(i.Comments), "node_id": "C", "body": in.Body, "url": "", "html_url": "",
		"issue_url": "", "user": map[string]any{"login": g.login, "id": 1}, "created_at": now, "updated_at": now, "author_association": "NONE"})
}

var (
	repoQualifier = regexp.MustCompile(`repo:(\S+)`)
	phrase        = regexp.MustCompile(`"([^"]*)"`)
)

// search answers issue searches of "<phrase>" in:body repo:o/r: the
// repository's issues whose body holds the phrase.
func (g *GitHub) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	m, p := repoQualifier.FindStringSubmatch(q), phrase.FindStringSubmatch(q)
	if m == nil || p == nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": fmt.Sprintf("Validation Failed: %q", q)})
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	items := []map[string]any{}
	for _, i := range g.repos[m[1]] {
		if strings.Contains(i.Body, p[1]) {
			items = append(items, g.view(m[1], i))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(items), "incomplete_results": false, "items": items})
}

// IssuesEvent is the body of an issues webhook delivery (action closed,
// reopened, ...) about issue number of repo, sent by login.
func (g *GitHub) IssuesEvent(action, repo string, number int, login string) []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := g.repos[repo][number-1]
	owner, name, _ := strings.Cut(repo, "/")
	b, _ := json.Marshal(map[string]any{"action": action, "issue": g.view(repo, i),
		"repository": map[string]any{"id": 1, "name": name, "full_name": repo, "owner": map[string]any{"login": owner}},
		"sender":     map[string]any{"login": login, "id": 2}})
	return b
}
