package githost

import (
	"fmt"
	"net/http"
	"strings"
)

// getPull answers "Get a pull request" (pulls/get): the pull request with its
// head and base (branch, sha, repository), as GitHub answers it.
func (s *Server) getPull(w http.ResponseWriter, c *call) {
	r, pr, ok := s.pullOf(w, c)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, s.pullJSON(r, pr))
}

func (s *Server) pullJSON(r *repository, pr *PullRequest) map[string]any {
	l := s.links()
	owner := s.ownerAccount(r)
	api := fmt.Sprintf("%s/repos/%s/%s", l.api, r.owner, r.name)
	self := fmt.Sprintf("%s/pulls/%d", api, pr.Number)
	html := fmt.Sprintf("%s/%s/%s/pull/%d", l.web, r.owner, r.name, pr.Number)
	issue := fmt.Sprintf("%s/issues/%d", api, pr.Number)
	add, del := 0, 0
	for _, f := range pr.Files {
		a, d := countChanges(f.Patch)
		add, del = add+a, del+d
	}
	var merge any
	if pr.MergeSHA != "" {
		merge = pr.MergeSHA
	}
	return map[string]any{
		"url": self, "id": int64(pr.Number) + 2_000_000, "node_id": nodeID("PR_", int64(pr.Number)),
		"html_url": html, "diff_url": html + ".diff", "patch_url": html + ".patch", "issue_url": issue,
		"commits_url": self + "/commits", "review_comments_url": self + "/comments", "review_comment_url": api + "/pulls/comments{/number}",
		"comments_url": issue + "/comments", "statuses_url": api + "/statuses/" + pr.HeadSHA,
		"number": pr.Number, "state": "open", "locked": false, "title": cmpOr(pr.Title, fmt.Sprintf("Pull request #%d", pr.Number)),
		"user": l.user(owner), "body": nil, "labels": []any{}, "milestone": nil, "active_lock_reason": nil,
		"created_at": timestamp(s.now()), "updated_at": timestamp(s.now()), "closed_at": nil, "merged_at": nil,
		"merge_commit_sha": merge, "assignee": nil, "assignees": []any{}, "requested_reviewers": []any{}, "requested_teams": []any{},
		"head": s.refJSON(r, owner, cmpOr(pr.HeadRef, "feature"), pr.HeadSHA),
		"base": s.refJSON(r, owner, cmpOr(pr.BaseRef, "main"), cmpOr(pr.BaseSHA, strings.Repeat("0", 40))),
		"_links": map[string]any{"self": href(self), "html": href(html), "issue": href(issue), "comments": href(issue + "/comments"),
			"review_comments": href(self + "/comments"), "review_comment": href(api + "/pulls/comments{/number}"),
			"commits": href(self + "/commits"), "statuses": href(api + "/statuses/" + pr.HeadSHA)},
		"author_association": "OWNER", "auto_merge": nil, "draft": false,
		"merged": false, "mergeable": true, "rebaseable": true, "mergeable_state": "clean", "merged_by": nil,
		"comments": 0, "review_comments": 0, "maintainer_can_modify": false,
		"commits": 1, "additions": add, "deletions": del, "changed_files": len(pr.Files),
	}
}

// refJSON is a pull request's head or base: branch, sha, repository.
func (s *Server) refJSON(r *repository, owner account, ref, sha string) map[string]any {
	return map[string]any{"label": r.owner + ":" + ref, "ref": ref, "sha": sha, "user": s.links().user(owner), "repo": s.repositoryJSON(r, owner)}
}

// ownerAccount is the account the repository's owner is shown as.
func (s *Server) ownerAccount(r *repository) account {
	return account{id: 500_000 + int64(len(r.owner)), login: r.owner}
}

// repositoryJSON is a repository (the description's "repository" schema).
func (s *Server) repositoryJSON(r *repository, owner account) map[string]any {
	l := s.links()
	api := fmt.Sprintf("%s/repos/%s/%s", l.api, r.owner, r.name)
	web := fmt.Sprintf("%s/%s/%s", l.web, r.owner, r.name)
	m := map[string]any{
		"id": int64(700_000 + len(r.owner+r.name)), "node_id": nodeID("R_", int64(len(r.owner+r.name))), "name": r.name,
		"full_name": r.owner + "/" + r.name, "owner": l.user(owner), "private": true, "html_url": web, "description": nil,
		"fork": false, "url": api, "license": nil, "forks": 0, "forks_count": 0, "homepage": nil, "language": nil,
		"default_branch": "main", "has_downloads": true, "has_issues": true, "has_projects": false, "has_wiki": false,
		"has_pages": false, "archived": false, "disabled": false, "mirror_url": nil, "open_issues": 0, "open_issues_count": 0,
		"pushed_at": nil, "created_at": nil, "updated_at": nil, "size": 0, "stargazers_count": 0, "watchers": 0, "watchers_count": 0,
		"clone_url": web + ".git", "git_url": "git:" + strings.TrimPrefix(web, "http://") + ".git",
		"ssh_url": "git@" + strings.TrimPrefix(l.web, "http://") + ":" + r.owner + "/" + r.name + ".git", "svn_url": web,
	}
	for k, suffix := range map[string]string{
		"archive_url": "/{archive_format}{/ref}", "assignees_url": "/assignees{/user}", "blobs_url": "/git/blobs{/sha}",
		"branches_url": "/branches{/branch}", "collaborators_url": "/collaborators{/collaborator}", "comments_url": "/comments{/number}",
		"commits_url": "/commits{/sha}", "compare_url": "/compare/{base}...{head}", "contents_url": "/contents/{+path}",
		"contributors_url": "/contributors", "deployments_url": "/deployments", "downloads_url": "/downloads", "events_url": "/events",
		"forks_url": "/forks", "git_commits_url": "/git/commits{/sha}", "git_refs_url": "/git/refs{/sha}", "git_tags_url": "/git/tags{/sha}",
		"hooks_url": "/hooks", "issue_comment_url": "/issues/comments{/number}", "issue_events_url": "/issues/events{/number}",
		"issues_url": "/issues{/number}", "keys_url": "/keys{/key_id}", "labels_url": "/labels{/name}", "languages_url": "/languages",
		"merges_url": "/merges", "milestones_url": "/milestones{/number}", "notifications_url": "/notifications{?since,all,participating}",
		"pulls_url": "/pulls{/number}", "releases_url": "/releases{/id}", "stargazers_url": "/stargazers", "statuses_url": "/statuses/{sha}",
		"subscribers_url": "/subscribers", "subscription_url": "/subscription", "tags_url": "/tags", "teams_url": "/teams",
		"trees_url": "/git/trees{/sha}",
	} {
		m[k] = api + suffix
	}
	return m
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
