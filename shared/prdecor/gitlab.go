package prdecor

import (
	"context"
	"errors"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/scmhost"
)

// gitlabHost decorates a GitLab merge request through client-go: the
// summary is one note, the verdict a commit status on the merge request's
// head. Inline review comments (discussions with a position) are not
// made on GitLab (docs/pull-requests.md, known limits).
type gitlabHost struct {
	c       *gitlab.Client
	pr      pull  // path: the project's full path; number: the iid
	account int64 // the integration's account: only its notes are ours
}

// head is the merge request's head commit (its sha), which is also what
// GitLab CI built (CI_COMMIT_SHA), read again as the head may have moved.
func (g *gitlabHost) head(ctx context.Context) (string, error) {
	mr, _, err := g.c.MergeRequests.GetMergeRequest(g.pr.path, int64(g.pr.number), nil, gitlab.WithContext(ctx))
	if err != nil {
		return "", err
	}
	if mr == nil || mr.SHA == "" {
		return "", errNoHead
	}
	return mr.SHA, nil
}

// findComment searches the merge request's notes, oldest first, for one
// of the integration's account that starts with marker: a note anyone
// else writes with the marker is never taken for ours.
func (g *gitlabHost) findComment(ctx context.Context, marker string) (int64, error) {
	opt := &gitlab.ListMergeRequestNotesOptions{ListOptions: gitlab.ListOptions{PerPage: 100, Page: 1},
		OrderBy: gitlab.Ptr("created_at"), Sort: gitlab.Ptr("asc")}
	for page := 0; page < maxCommentPages; page++ {
		list, res, err := g.c.Notes.ListMergeRequestNotes(g.pr.path, int64(g.pr.number), opt, gitlab.WithContext(ctx))
		if err != nil {
			return 0, err
		}
		for _, n := range list {
			if !n.System && n.Author.ID == g.account && strings.HasPrefix(n.Body, marker) {
				return n.ID, nil
			}
		}
		if res.NextPage == 0 {
			return 0, nil
		}
		opt.Page = res.NextPage
	}
	return 0, nil
}

func (g *gitlabHost) createComment(ctx context.Context, body string) (int64, error) {
	n, _, err := g.c.Notes.CreateMergeRequestNote(g.pr.path, int64(g.pr.number),
		&gitlab.CreateMergeRequestNoteOptions{Body: &body}, gitlab.WithContext(ctx))
	if err != nil {
		return 0, err
	}
	return n.ID, nil
}

func (g *gitlabHost) editComment(ctx context.Context, id int64, body string) (int64, error) {
	n, _, err := g.c.Notes.UpdateMergeRequestNote(g.pr.path, int64(g.pr.number), id,
		&gitlab.UpdateMergeRequestNoteOptions{Body: &body}, gitlab.WithContext(ctx))
	if err != nil {
		return 0, err
	}
	return n.ID, nil
}

// setStatus posts the verdict as an external commit status: failed or
// success, named codescan/<project>.
func (g *gitlabHost) setStatus(ctx context.Context, sha string, v verdict) (int, error) {
	opt := &gitlab.SetCommitStatusOptions{State: gitlab.Success, Name: gitlab.Ptr(v.name), Description: gitlab.Ptr(v.description)}
	if v.failing {
		opt.State = gitlab.Failed
	}
	if v.targetURL != "" {
		opt.TargetURL = gitlab.Ptr(v.targetURL)
	}
	_, res, err := g.c.Commits.SetCommitStatus(g.pr.path, sha, opt, gitlab.WithContext(ctx))
	if err != nil {
		return 0, err
	}
	return res.StatusCode, nil
}

func (g *gitlabHost) gone(err error) bool { return errors.Is(err, gitlab.ErrNotFound) }

func (g *gitlabHost) failure(doing string, err error) outbound.Outcome {
	return scmhost.FailureGitLab(doing, err)
}
