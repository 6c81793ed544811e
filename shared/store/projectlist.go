package store

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ledger"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/tabledef"
)

// projectCount counts a company's projects (kept by CreateProject).
const projectCount = "PROJECTS"

// ProjectPage is a page of projects by id, with the company's total.
type ProjectPage struct {
	Projects []Project
	Total    int
	PageResult
}

// ListProjectsPage reads one page of a company's projects by id.
func (s *Store) ListProjectsPage(ctx context.Context, companyID int64, q PageQuery) (ProjectPage, error) {
	var p ProjectPage
	var err error
	l := page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix("PROJECT#"), Forward: true}
	if p.PageResult, err = s.readPage(ctx, l, q, &p.Projects); err != nil {
		return ProjectPage{}, err
	}
	p.Total, err = s.l.CompanyCount(ctx, companyID, projectCount)
	return p, err
}

// ProjectsByRepo returns the company's projects whose repository URL
// contains fragment, ignoring case, by id. A substring has no key: this
// reads every project of the company.
func (s *Store) ProjectsByRepo(ctx context.Context, companyID int64, fragment string) ([]Project, error) {
	all, err := s.ListProjects(ctx, companyID)
	if err != nil {
		return nil, err
	}
	fragment = strings.ToLower(fragment)
	var out []Project
	for _, p := range all {
		if p.RepoURL != "" && strings.Contains(strings.ToLower(p.RepoURL), fragment) {
			out = append(out, p)
		}
	}
	return out, nil
}

// SetDefaultBranch sets a project's default branch; ErrNotFound when the
// company has no such project.
// The change and its audit entry are one transaction.
func (s *Store) SetDefaultBranch(ctx context.Context, companyID, projectID int64, branch string) (Project, error) {
	var p Project
	if err := s.t.GetItemConsistent(ctx, projectKey(companyID, projectID), &p); err != nil {
		return Project{}, err
	}
	upd := expression.Set(expression.Name("default_branch"), expression.Value(branch))
	exists := expression.AttributeExists(expression.Name(tabledef.PK))
	item, err := s.t.TxUpdate(p.Key, upd, &exists)
	if err != nil {
		return Project{}, err
	}
	audit, err := s.l.TxAudit(ctx, companyID, AuditEntry{
		Action: "project.update", TargetType: "project", TargetID: strconv.FormatInt(projectID, 10),
		Changes: map[string]Change{"default_branch": {Before: ledger.Nullable(p.DefaultBranch), After: branch}},
	})
	if err != nil {
		return Project{}, err
	}
	if err := s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...)); errors.Is(err, ErrConflict) {
		return Project{}, ErrNotFound
	} else if err != nil {
		return Project{}, err
	}
	p.DefaultBranch = branch
	return p, nil
}

// SetDefaultBranchIfEmpty gives a project its default branch unless it has
// one (the first upload's branch never overrides a chosen one).
func (s *Store) SetDefaultBranchIfEmpty(ctx context.Context, companyID, projectID int64, branch string) error {
	upd := expression.Set(expression.Name("default_branch"), expression.Value(branch))
	cond := expression.AttributeNotExists(expression.Name("default_branch"))
	err := s.t.Update(ctx, projectKey(companyID, projectID), upd, &cond, nil)
	if errors.Is(err, ErrConflict) {
		return nil
	}
	return err
}
