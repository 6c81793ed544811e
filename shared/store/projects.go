package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Project is a scanned code base of a company.
type Project struct {
	Key
	ID        int64    `dynamodbav:"id"`
	CompanyID int64    `dynamodbav:"company_id"`
	Name      string   `dynamodbav:"name"`
	RepoURL   string   `dynamodbav:"repo_url,omitempty"`
	Tags      []string `dynamodbav:"tags,omitempty"`
	Branches  []string `dynamodbav:"branches,omitempty"`
	// DefaultBranch is the branch pull requests merge into; empty until
	// set, when the branch of the project's first scan stands for it.
	DefaultBranch string `dynamodbav:"default_branch,omitempty"`
	CreatedAt     string `dynamodbav:"created_at"`
}

func projectKey(companyID, projectID int64) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: fmt.Sprintf("PROJECT#%012d", projectID)}
}

// projectNameKey guards name uniqueness inside a company and serves look-ups
// by name.
func projectNameKey(companyID int64, name string) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: "PROJECTNAME#" + strings.ToLower(name)}
}

type projectNameRef struct {
	Key
	ProjectID int64 `dynamodbav:"project_id"`
}

// CreateProject stores a new project with the next project id. A name
// already used in the company (case-insensitive) is ErrConflict.
func (s *Store) CreateProject(ctx context.Context, p Project) (Project, error) {
	id, err := s.NextID(ctx, "project")
	if err != nil {
		return Project{}, err
	}
	p.ID = id
	p.Key = projectKey(p.CompanyID, id)
	if p.CreatedAt == "" {
		p.CreatedAt = s.t.Stamp()
	}
	guard, err := s.t.TxPutNew(projectNameRef{Key: projectNameKey(p.CompanyID, p.Name), ProjectID: id})
	if err != nil {
		return Project{}, err
	}
	item, err := s.t.TxPut(p, nil)
	if err != nil {
		return Project{}, err
	}
	counted, err := s.l.TxCount(p.CompanyID, projectCount, 1)
	if err != nil {
		return Project{}, err
	}
	if err := s.writeProject(ctx, nil, p, []types.TransactWriteItem{guard, item, counted}); err != nil {
		return Project{}, err
	}
	return p, nil
}

// GetProject reads a project of a company.
func (s *Store) GetProject(ctx context.Context, companyID, projectID int64) (Project, error) {
	var p Project
	err := s.t.GetItem(ctx, projectKey(companyID, projectID), &p)
	return p, err
}

// ProjectByName finds a project of a company by name (case-insensitive).
func (s *Store) ProjectByName(ctx context.Context, companyID int64, name string) (Project, error) {
	var ref projectNameRef
	if err := s.t.GetItem(ctx, projectNameKey(companyID, name), &ref); err != nil {
		return Project{}, err
	}
	return s.GetProject(ctx, companyID, ref.ProjectID)
}

// ListProjects returns every project of a company, by id.
func (s *Store) ListProjects(ctx context.Context, companyID int64) ([]Project, error) {
	var out []Project
	err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), "PROJECT#"), true, &out)
	return out, err
}

// ProjectsByID reads the company's projects with these ids (by key); ids
// that are not the company's projects are absent from the map.
func (s *Store) ProjectsByID(ctx context.Context, companyID int64, ids []int64) (map[int64]Project, error) {
	return ddb.ByID(ctx, s.t, ids, func(id int64) Key { return projectKey(companyID, id) }, func(p Project) int64 { return p.ID })
}
