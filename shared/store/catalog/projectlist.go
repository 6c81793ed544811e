package catalog

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// projectCount counts a company's projects (kept by CreateProject).
const projectCount = "PROJECTS"

// ListProjects reads one page of a company's projects by id, with the
// company's total.
func (s *Catalog) ListProjects(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.Project], error) {
	l := page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(schema.ProjectSKPrefix), Forward: true}
	return counted.Page[schema.Project](ctx, s.t, s.l, companyID, l, q, projectCount)
}

// ListProjectsByRepo reads one page of the company's projects whose
// repository URL contains fragment, ignoring case, by id. A substring has
// no key: the query's filter matches the lower-cased copy of the URL each
// project carries (RepoURLLower), and the pager reads on until the page is
// full, so a page costs the projects it passes over, not the company's.
// The total is exact: the page's end on the last page, else a counting
// walk of the filtered list (page.Count: a COUNT query, which
// returns no items but is charged for every project it reads, about 300
// bytes each, so one round trip per ~3,000 projects).
func (s *Catalog) ListProjectsByRepo(ctx context.Context, companyID int64, fragment string, q page.Request) (page.Page[schema.Project], error) {
	fragment = strings.ToLower(fragment)
	filter := expression.Contains(expression.Name("repo_url_lower"), fragment)
	l := page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(schema.ProjectSKPrefix), Forward: true,
		Filter: &filter, View: "repo_url=" + fragment}
	p, err := page.ReadPage[schema.Project](ctx, s.t, l, q)
	if err != nil {
		return page.Page[schema.Project]{}, err
	}
	if p.Next == "" && (len(p.Items) > 0 || p.Offset == 0) { // the list's last page
		return p.Counted(int64(p.Offset + len(p.Items))), nil
	}
	n, err := page.Count(ctx, s.t, l)
	return p.Counted(n), err
}

// SetDefaultBranch sets a project's default branch; ddb.ErrNotFound when the
// company has no such project.
// The change and its audit entry are one transaction.
func (s *Catalog) SetDefaultBranch(ctx context.Context, companyID, projectID int64, branch string) (schema.Project, error) {
	var p schema.Project
	if err := s.t.GetItemConsistent(ctx, schema.ProjectKey(companyID, projectID), &p); err != nil {
		return schema.Project{}, err
	}
	upd := expression.Set(expression.Name("default_branch"), expression.Value(branch))
	exists := expression.AttributeExists(expression.Name(tabledef.PK))
	item, err := s.t.TxUpdate(p.Key, upd, &exists)
	if err != nil {
		return schema.Project{}, err
	}
	audit, err := s.l.TxAudit(ctx, companyID, ledger.AuditEntry{
		Action: "project.update", TargetType: "project", TargetID: strconv.FormatInt(projectID, 10),
		Changes: map[string]ledger.Change{"default_branch": {Before: ledger.Nullable(p.DefaultBranch), After: branch}},
	})
	if err != nil {
		return schema.Project{}, err
	}
	if err := s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...)); errors.Is(err, ddb.ErrConflict) {
		return schema.Project{}, ddb.ErrNotFound
	} else if err != nil {
		return schema.Project{}, err
	}
	p.DefaultBranch = branch
	return p, nil
}

// SetDefaultBranchIfEmpty gives a project its default branch unless it has
// one (the first upload's branch never overrides a chosen one).
func (s *Catalog) SetDefaultBranchIfEmpty(ctx context.Context, companyID, projectID int64, branch string) error {
	upd := expression.Set(expression.Name("default_branch"), expression.Value(branch))
	cond := expression.AttributeNotExists(expression.Name("default_branch"))
	err := s.t.Update(ctx, schema.ProjectKey(companyID, projectID), upd, &cond, nil)
	if errors.Is(err, ddb.ErrConflict) {
		return nil
	}
	return err
}

// SetProjectRepoURLIfEmpty gives a project of the company a repository URL
// unless it already has one (a URL set by a person or an earlier upload is
// never overwritten), and moves the project counts of the teams whose URL
// patterns it now matches.
func (s *Catalog) SetProjectRepoURLIfEmpty(ctx context.Context, companyID, projectID int64, repoURL string) error {
	before, err := s.GetProject(ctx, companyID, projectID)
	if err != nil || before.RepoURL != "" {
		return err
	}
	after := before
	after.RepoURL, after.RepoURLLower = repoURL, strings.ToLower(repoURL)
	upd := expression.Set(expression.Name("repo_url"), expression.Value(repoURL)).
		Set(expression.Name("repo_url_lower"), expression.Value(after.RepoURLLower))
	cond := expression.AttributeExists(expression.Name(tabledef.PK)).And(expression.AttributeNotExists(expression.Name("repo_url")))
	item, err := s.t.TxUpdate(before.Key, upd, &cond)
	if err != nil {
		return err
	}
	err = s.writeProject(ctx, &before, after, []types.TransactWriteItem{item})
	if ddb.ConditionFailedAt(err, 0) { // set meanwhile, by someone else
		return nil
	}
	return err
}
