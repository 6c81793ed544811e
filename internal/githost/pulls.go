package githost

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// pullOf returns the addressed repository and pull request, or answers 404.
func (s *Server) pullOf(w http.ResponseWriter, c *call) (*repository, *PullRequest, bool) {
	r, ok := s.repoOf(w, c)
	if !ok {
		return nil, nil, false
	}
	pr := r.pulls[int(c.intParam("pull_number"))]
	if pr == nil {
		writeError(w, http.StatusNotFound, notFound)
		return nil, nil, false
	}
	return r, pr, true
}

func (s *Server) listFiles(w http.ResponseWriter, c *call) {
	r, pr, ok := s.pullOf(w, c)
	if !ok {
		return
	}
	l := s.links()
	out := []map[string]any{}
	for _, f := range paginate(w, c.r, s.srv.URL, pr.Files) {
		out = append(out, diffEntryJSON(l, r, pr, f))
	}
	writeJSON(w, http.StatusOK, out)
}

func diffEntryJSON(l links, r *repository, pr *PullRequest, f File) map[string]any {
	add, del := countChanges(f.Patch)
	status := f.Status
	if status == "" {
		status = "modified"
	}
	blob := sha1.Sum([]byte(pr.HeadSHA + "\x00" + f.Filename)) // stands in for the blob's git sha
	m := map[string]any{
		"sha": hex.EncodeToString(blob[:]), "filename": f.Filename, "status": status,
		"additions": add, "deletions": del, "changes": add + del,
		"blob_url":     fmt.Sprintf("%s/%s/%s/blob/%s/%s", l.web, r.owner, r.name, pr.HeadSHA, f.Filename),
		"raw_url":      fmt.Sprintf("%s/%s/%s/raw/%s/%s", l.web, r.owner, r.name, pr.HeadSHA, f.Filename),
		"contents_url": fmt.Sprintf("%s/repos/%s/%s/contents/%s?ref=%s", l.api, r.owner, r.name, f.Filename, pr.HeadSHA),
	}
	if f.Patch != "" {
		m["patch"] = f.Patch
	}
	if f.PreviousFilename != "" {
		m["previous_filename"] = f.PreviousFilename
	}
	return m
}

func (s *Server) listReviewComments(w http.ResponseWriter, c *call) {
	r, pr, ok := s.pullOf(w, c)
	if !ok {
		return
	}
	q := c.r.URL.Query()
	since, _ := time.Parse(time.RFC3339, q.Get("since"))
	var all []*ReviewComment
	for _, rc := range r.reviewComments {
		if rc.Pull == pr.Number && !rc.UpdatedAt.Before(since) {
			all = append(all, rc)
		}
	}
	sortReviewComments(all, q.Get("sort"), q.Get("direction"))
	l := s.links()
	out := []map[string]any{}
	for _, rc := range paginate(w, c.r, s.srv.URL, all) {
		out = append(out, reviewCommentJSON(l, r, rc))
	}
	writeJSON(w, http.StatusOK, out)
}

// sortReviewComments orders as GitHub: by id ascending unless sort is given
// (then direction applies, descending by default).
func sortReviewComments(rcs []*ReviewComment, sort, direction string) {
	if sort == "" {
		return
	}
	key := func(rc *ReviewComment) time.Time { return rc.CreatedAt }
	if sort == "updated" {
		key = func(rc *ReviewComment) time.Time { return rc.UpdatedAt }
	}
	slices.SortStableFunc(rcs, func(a, b *ReviewComment) int {
		if direction == "asc" {
			return key(a).Compare(key(b))
		}
		return key(b).Compare(key(a))
	})
}

type reviewCommentInput struct {
	Body        string `json:"body"`
	CommitID    string `json:"commit_id"`
	Path        string `json:"path"`
	Position    int    `json:"position"`
	Side        string `json:"side"`
	Line        int    `json:"line"`
	StartLine   int    `json:"start_line"`
	StartSide   string `json:"start_side"`
	InReplyTo   int64  `json:"in_reply_to"`
	SubjectType string `json:"subject_type"`
}

func (s *Server) createReviewComment(w http.ResponseWriter, c *call) {
	r, pr, ok := s.pullOf(w, c)
	if !ok {
		return
	}
	var in reviewCommentInput
	if err := c.decode(&in); err != nil {
		writeValidationFailed(w, err)
		return
	}
	if !checkCommentBody(w, "PullRequestReviewComment", in.Body) {
		return
	}
	rc, ok := s.anchor(w, r, pr, in)
	if !ok {
		return
	}
	now := s.now()
	rc.ID, rc.Pull, rc.Body, rc.User, rc.userID, rc.CreatedAt, rc.UpdatedAt = s.idLocked(), pr.Number, in.Body, c.user.login, c.user.id, now, now
	r.reviewComments = append(r.reviewComments, rc)
	l := s.links()
	w.Header().Set("Location", fmt.Sprintf("%s/repos/%s/%s/pulls/comments/%d", l.api, r.owner, r.name, rc.ID))
	writeJSON(w, http.StatusCreated, reviewCommentJSON(l, r, rc))
}

// anchor resolves where a new review comment sits: a reply takes its
// parent's place; otherwise the commit, the file and the line must be part
// of the pull request's diff, or GitHub refuses the comment with 422.
func (s *Server) anchor(w http.ResponseWriter, r *repository, pr *PullRequest, in reviewCommentInput) (*ReviewComment, bool) {
	if in.InReplyTo != 0 {
		return replyAnchor(w, r, pr, in.InReplyTo)
	}
	if !strings.EqualFold(in.CommitID, pr.HeadSHA) {
		writeUnprocessable(w, fieldError{Resource: "PullRequestReviewComment", Code: "custom", Field: "commit_id", Message: "commit_id is not part of the pull request"})
		return nil, false
	}
	f, ok := fileOf(pr, in.Path)
	if !ok {
		writeUnprocessable(w, unresolved("path"))
		return nil, false
	}
	rc := &ReviewComment{CommitID: in.CommitID, Path: in.Path, SubjectType: "line"}
	if in.SubjectType == "file" {
		rc.SubjectType = "file"
		return rc, true
	}
	return lineAnchor(w, rc, f, in)
}

func replyAnchor(w http.ResponseWriter, r *repository, pr *PullRequest, parent int64) (*ReviewComment, bool) {
	for _, p := range r.reviewComments {
		if p.ID == parent && p.Pull == pr.Number {
			rc := *p
			rc.InReplyTo = parent
			return &rc, true
		}
	}
	writeError(w, http.StatusNotFound, notFound)
	return nil, false
}

func fileOf(pr *PullRequest, path string) (File, bool) {
	for _, f := range pr.Files {
		if f.Filename == path {
			return f, true
		}
	}
	return File{}, false
}

func unresolved(field string) fieldError {
	return fieldError{Resource: "PullRequestReviewComment", Code: "custom", Field: "pull_request_review_thread." + field, Message: "could not be resolved"}
}

// lineAnchor checks line (or the deprecated position) and start_line
// against the file's hunks and records the diff_hunk GitHub answers with.
func lineAnchor(w http.ResponseWriter, rc *ReviewComment, f File, in reviewCommentInput) (*ReviewComment, bool) {
	hunks, _ := parsePatch(f.Patch)
	line, side := in.Line, in.Side
	if side == "" {
		side = "RIGHT"
	}
	if in.Position != 0 && line == 0 {
		var ok bool
		if line, side, ok = atPosition(hunks, in.Position); !ok {
			writeUnprocessable(w, unresolved("position"))
			return nil, false
		}
	}
	hunkText, ok := locate(hunks, line, side)
	if !ok {
		writeUnprocessable(w, unresolved("line"))
		return nil, false
	}
	rc.Line, rc.Side, rc.DiffHunk = line, side, hunkText
	if in.StartLine == 0 {
		return rc, true
	}
	rc.StartLine, rc.StartSide = in.StartLine, in.StartSide
	if rc.StartSide == "" {
		rc.StartSide = side
	}
	if _, ok := locate(hunks, in.StartLine, rc.StartSide); !ok || in.StartLine > line {
		writeUnprocessable(w, unresolved("start_line"))
		return nil, false
	}
	return rc, true
}

func reviewCommentJSON(l links, r *repository, rc *ReviewComment) map[string]any {
	api := fmt.Sprintf("%s/repos/%s/%s", l.api, r.owner, r.name)
	self := fmt.Sprintf("%s/pulls/comments/%d", api, rc.ID)
	html := fmt.Sprintf("%s/%s/%s/pull/%d#discussion_r%d", l.web, r.owner, r.name, rc.Pull, rc.ID)
	pull := fmt.Sprintf("%s/pulls/%d", api, rc.Pull)
	// GitHub files a standalone review comment under a review of its own;
	// this server keeps no reviews, so the id is derived from the comment's.
	m := map[string]any{
		"url": self, "pull_request_review_id": rc.ID + 1_000_000, "id": rc.ID, "node_id": nodeID("PRRC_", rc.ID),
		"diff_hunk": rc.DiffHunk, "path": rc.Path, "commit_id": rc.CommitID, "original_commit_id": rc.CommitID,
		"user": l.user(account{id: rc.userID, login: rc.User}), "body": rc.Body,
		"created_at": timestamp(rc.CreatedAt), "updated_at": timestamp(rc.UpdatedAt),
		"html_url": html, "pull_request_url": pull, "author_association": "NONE",
		"_links":       map[string]any{"self": href(self), "html": href(html), "pull_request": href(pull)},
		"subject_type": rc.SubjectType, "start_line": nil, "original_start_line": nil, "start_side": nil,
		"reactions": rollup(self+"/reactions", nil),
	}
	if rc.Line != 0 {
		m["line"], m["original_line"], m["side"] = rc.Line, rc.Line, rc.Side
	}
	if rc.StartLine != 0 {
		m["start_line"], m["original_start_line"], m["start_side"] = rc.StartLine, rc.StartLine, rc.StartSide
	}
	if rc.InReplyTo != 0 {
		m["in_reply_to_id"] = rc.InReplyTo
	}
	return m
}

func href(u string) map[string]any { return map[string]any{"href": u} }
