package issues

import (
	"cmp"
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/repourl"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// errNoProject: the project filters match no project (200 no_project_found).
var errNoProject = errors.New("no project matches the filters")

// scopes turns the `project`, `repo` and `branch` filters into the counter
// scopes to read, by ascending project id. No filter is the whole company.
// A project matches `project` by name (case-insensitive), `repo` when both
// repository URLs have the same canonical form (repourl.Normalize: host
// case, scheme, credentials, trailing slash and `.git` do not matter), and
// `branch` when it has issues on that branch. Filters combine with AND;
// when they leave no project the answer is errNoProject.
func (h handlers) scopes(ctx context.Context, companyID int64, q url.Values) ([]schema.Scope, error) {
	name, repo, branch := q.Get("project"), strings.TrimSpace(q.Get("repo")), q.Get("branch")
	if name == "" && repo == "" && branch == "" {
		return []schema.Scope{{}}, nil
	}
	if repo != "" {
		// Text that is not a repository URL matches no project.
		canon, err := repourl.Normalize(repo)
		if err != nil {
			return nil, errNoProject
		}
		repo = canon
	}
	var ids []int64 // nil: every project (only while name and repo are unset)
	if name != "" {
		p, err := h.store.Catalog.ProjectByName(ctx, companyID, name)
		if errors.Is(err, ddb.ErrNotFound) {
			return nil, errNoProject
		}
		if err != nil {
			return nil, err
		}
		if repo != "" && !sameRepo(p.RepoURL, repo) {
			return nil, errNoProject
		}
		ids = []int64{p.ID}
	} else if repo != "" {
		projects, err := h.store.Catalog.AllProjects(ctx, companyID)
		if err != nil {
			return nil, err
		}
		ids = []int64{}
		for _, p := range projects {
			if sameRepo(p.RepoURL, repo) {
				ids = append(ids, p.ID)
			}
		}
	}
	var scopes []schema.Scope
	if branch == "" {
		for _, id := range ids {
			scopes = append(scopes, schema.Scope{ProjectID: id})
		}
	} else {
		withBranch, err := h.store.Lists.BranchProjects(ctx, companyID, branch)
		if err != nil {
			return nil, err
		}
		for _, id := range withBranch {
			if ids == nil || slices.Contains(ids, id) {
				scopes = append(scopes, schema.Scope{ProjectID: id, Branch: branch})
			}
		}
	}
	if len(scopes) == 0 {
		return nil, errNoProject
	}
	slices.SortFunc(scopes, func(a, b schema.Scope) int { return cmp.Compare(a.ProjectID, b.ProjectID) })
	return scopes, nil
}

// sameRepo tells whether a stored repository URL has the canonical form
// canon.
func sameRepo(stored, canon string) bool {
	u, err := repourl.Normalize(stored)
	return err == nil && u == canon
}
