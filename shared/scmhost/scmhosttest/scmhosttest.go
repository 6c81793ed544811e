// Package scmhosttest is a stand-in source-code host for tests: an httptest
// server that answers GET {prefix}/user the way GitHub's REST API does (the
// full user object for a known token, 401 "Bad credentials" otherwise).
package scmhosttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Server is a fake GitHub-compatible host.
type Server struct {
	*httptest.Server
	Prefix string // gateway prefix the API lives under ("" or e.g. "/api/v3")

	mu       sync.Mutex
	accounts map[string]account
	requests int
	// Before, when set, runs before each answer (to hold a request back).
	Before func(*http.Request)
}

type account struct {
	id    int64
	login string
}

// New starts a host serving its API under prefix; it stops with the test.
func New(t testing.TB, prefix string) *Server {
	s := &Server{Prefix: prefix, accounts: map[string]account{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// AddToken makes token authenticate as the user id/login.
func (s *Server) AddToken(token string, id int64, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts[token] = account{id: id, login: login}
}

// Requests is how many requests the host received.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	before := s.Before
	s.mu.Unlock()
	if before != nil {
		before(r)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-GitHub-Media-Type", "github.v3; format=json")
	w.Header().Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	if r.Method != http.MethodGet || r.URL.Path != s.Prefix+"/user" {
		reply(w, http.StatusNotFound, map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
		return
	}
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		tok, _ = strings.CutPrefix(auth, "token ")
	}
	s.mu.Lock()
	a, known := s.accounts[tok]
	s.mu.Unlock()
	if tok == "" || !known {
		reply(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
		return
	}
	w.Header().Set("X-OAuth-Scopes", "read:org, repo")
	w.Header().Set("X-RateLimit-Limit", "5000")
	w.Header().Set("X-RateLimit-Remaining", "4999")
	w.Header().Set("X-RateLimit-Used", "1")
	w.Header().Set("X-RateLimit-Resource", "core")
	reply(w, http.StatusOK, user(s.URL+s.Prefix, a))
}

// user is the authenticated-user object in GitHub's format.
func user(api string, a account) map[string]any {
	u := api + "/users/" + a.login
	return map[string]any{
		"login": a.login, "id": a.id, "node_id": fmt.Sprintf("MDQ6VXNlcjE%d", a.id),
		"avatar_url":  fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", a.id),
		"gravatar_id": "", "url": u, "html_url": "https://github.com/" + a.login,
		"followers_url": u + "/followers", "following_url": u + "/following{/other_user}",
		"gists_url": u + "/gists{/gist_id}", "starred_url": u + "/starred{/owner}{/repo}",
		"subscriptions_url": u + "/subscriptions", "organizations_url": u + "/orgs",
		"repos_url": u + "/repos", "events_url": u + "/events{/privacy}",
		"received_events_url": u + "/received_events", "type": "User", "user_view_type": "private",
		"site_admin": false, "name": "CI Bot " + a.login, "company": "@acme", "blog": "",
		"location": nil, "email": nil, "hireable": nil, "bio": nil, "twitter_username": nil,
		"notification_email": nil, "public_repos": 3, "public_gists": 0, "followers": 1,
		"following": 0, "created_at": "2019-03-11T09:21:44Z", "updated_at": "2025-01-02T10:00:00Z",
		"private_gists": 0, "total_private_repos": 12, "owned_private_repos": 2, "disk_usage": 40211,
		"collaborators": 0, "two_factor_authentication": true,
		"plan": map[string]any{"name": "free", "space": 976562499, "collaborators": 0, "private_repos": 10000},
	}
}

func reply(w http.ResponseWriter, status int, v any) {
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
