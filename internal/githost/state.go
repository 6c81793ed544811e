package githost

import (
	"slices"
	"strings"
	"time"
)

// repository is the in-memory state of one owner/repo.
type repository struct {
	owner, name    string
	commits        map[string]bool // known shas, lower-case
	issues         map[int]bool    // issue numbers; every pull request is one
	pulls          map[int]*PullRequest
	statuses       []*Status
	comments       []*IssueComment
	reviewComments []*ReviewComment
}

// PullRequest seeds a pull request: its number (also its issue number), head
// commit and changed files; optionally its title, branches, base commit and
// the test merge commit GitHub builds for it (MergeSHA, what a pull_request
// workflow checks out by default: a commit of the repository, not shown on
// the pull request).
type PullRequest struct {
	Number   int
	HeadSHA  string
	Files    []File
	Title    string
	HeadRef  string // default "feature"
	BaseRef  string // default "main"
	BaseSHA  string
	MergeSHA string
}

// File is a changed file of a pull request, as "List pull requests files"
// returns it. Additions and deletions are counted from Patch.
type File struct {
	Filename         string
	Status           string // added, removed, modified, renamed, copied, changed, unchanged
	Patch            string // unified diff hunks ("@@ -1,2 +1,3 @@ ..."), empty for binaries
	PreviousFilename string // for renamed
}

// Status is a commit status as stored.
type Status struct {
	ID          int64
	SHA         string
	State       string
	Context     string
	Description *string
	TargetURL   *string
	Creator     string
	CreatedAt   time.Time
}

// IssueComment is a comment on an issue or pull request's conversation.
type IssueComment struct {
	ID        int64
	Issue     int
	Body      string
	User      string
	CreatedAt time.Time
	UpdatedAt time.Time
	Reactions []Reaction
	userID    int64
}

// Reaction is an emoji reaction on an issue comment.
type Reaction struct {
	ID        int64
	Content   string
	User      string
	CreatedAt time.Time
	userID    int64
}

// ReviewComment is an inline comment on a pull request's diff.
type ReviewComment struct {
	ID          int64
	Pull        int
	Body        string
	User        string
	CommitID    string
	Path        string
	Line        int // 0 for a file-level comment
	Side        string
	StartLine   int
	StartSide   string
	SubjectType string
	InReplyTo   int64
	DiffHunk    string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	userID      int64
}

func repoKey(owner, name string) string { return strings.ToLower(owner + "/" + name) }

// AddRepo creates owner/name (empty); requests for unknown repositories are
// answered 404 as GitHub does.
func (s *Server) AddRepo(owner, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, name)
}

func (s *Server) repoLocked(owner, name string) *repository {
	k := repoKey(owner, name)
	if r, ok := s.repos[k]; ok {
		return r
	}
	r := &repository{owner: owner, name: name, commits: map[string]bool{}, issues: map[int]bool{}, pulls: map[int]*PullRequest{}}
	s.repos[k] = r
	return r
}

// AddCommit makes sha known in owner/name (statuses on unknown commits are
// refused with 422, as GitHub does).
func (s *Server) AddCommit(owner, name, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, name).commits[strings.ToLower(sha)] = true
}

// AddIssue creates issue number in owner/name.
func (s *Server) AddIssue(owner, name string, number int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoLocked(owner, name).issues[number] = true
}

// AddPullRequest creates the pull request (and its issue and head commit).
func (s *Server) AddPullRequest(owner, name string, pr PullRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	pr.Files = slices.Clone(pr.Files)
	r.pulls[pr.Number] = &pr
	r.issues[pr.Number] = true
	r.commits[strings.ToLower(pr.HeadSHA)] = true
	if pr.MergeSHA != "" {
		r.commits[strings.ToLower(pr.MergeSHA)] = true
	}
}

// AddIssueComment seeds a comment written by login (any user, not only a
// token's), e.g. a summary left by an earlier run or a human's remark.
func (s *Server) AddIssueComment(owner, name string, issue int, login, body string) IssueComment {
	a := s.accountFor(login)
	id := s.newID()
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(owner, name)
	r.issues[issue] = true
	c := &IssueComment{ID: id, Issue: issue, Body: body, User: a.login, userID: a.id, CreatedAt: now, UpdatedAt: now}
	r.comments = append(r.comments, c)
	return *c
}

// AccountID is the id of the user token authenticates as (0 for a token
// the server does not know): an integration's account_id.
func (s *Server) AccountID(token string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[token].id
}

// accountFor returns the token account with that login, or a new id for a
// user who has no token here.
func (s *Server) accountFor(login string) account {
	s.mu.Lock()
	for _, a := range s.tokens {
		if a.login == login {
			s.mu.Unlock()
			return a
		}
	}
	s.mu.Unlock()
	return account{id: s.newID(), login: login}
}

// Statuses returns the statuses set on sha in owner/name, oldest first.
func (s *Server) Statuses(owner, name, sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Status
	if r := s.repos[repoKey(owner, name)]; r != nil {
		for _, st := range r.statuses {
			if strings.EqualFold(st.SHA, sha) {
				out = append(out, *st)
			}
		}
	}
	return out
}

// IssueComments returns the comments on issue (or pull request) number,
// oldest first.
func (s *Server) IssueComments(owner, name string, issue int) []IssueComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []IssueComment
	if r := s.repos[repoKey(owner, name)]; r != nil {
		for _, c := range r.comments {
			if c.Issue == issue {
				cp := *c
				cp.Reactions = slices.Clone(c.Reactions)
				out = append(out, cp)
			}
		}
	}
	return out
}

// ReviewComments returns the review comments on pull request number, oldest
// first.
func (s *Server) ReviewComments(owner, name string, pull int) []ReviewComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ReviewComment
	if r := s.repos[repoKey(owner, name)]; r != nil {
		for _, c := range r.reviewComments {
			if c.Pull == pull {
				out = append(out, *c)
			}
		}
	}
	return out
}
