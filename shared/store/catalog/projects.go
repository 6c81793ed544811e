package catalog

import (
	"context"
	"strings"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// CreateProject stores a new project with the next project id. A name
// already used in the company (case-insensitive) is ddb.ErrConflict.
func (s *Catalog) CreateProject(ctx context.Context, p schema.Project) (schema.Project, error) {
	id, err := s.l.NextID(ctx, "project")
	if err != nil {
		return schema.Project{}, err
	}
	p.ID = id
	p.Key = schema.ProjectKey(p.CompanyID, id)
	p.RepoURLLower = strings.ToLower(p.RepoURL)
	if p.CreatedAt == "" {
		p.CreatedAt = s.t.Stamp()
	}
	guard, err := s.t.TxPutNew(schema.ProjectNameRef{Key: schema.ProjectNameKey(p.CompanyID, p.Name), ProjectID: id})
	if err != nil {
		return schema.Project{}, err
	}
	item, err := s.t.TxPut(p, nil)
	if err != nil {
		return schema.Project{}, err
	}
	counted, err := s.l.TxCount(p.CompanyID, projectCount, 1)
	if err != nil {
		return schema.Project{}, err
	}
	if err := s.writeProject(ctx, nil, p, []types.TransactWriteItem{guard, item, counted}); err != nil {
		return schema.Project{}, err
	}
	return p, nil
}

// GetProject reads a project of a company.
func (s *Catalog) GetProject(ctx context.Context, companyID, projectID int64) (schema.Project, error) {
	var p schema.Project
	err := s.t.GetItem(ctx, schema.ProjectKey(companyID, projectID), &p)
	return p, err
}

// ProjectByName finds a project of a company by name (case-insensitive).
func (s *Catalog) ProjectByName(ctx context.Context, companyID int64, name string) (schema.Project, error) {
	var ref schema.ProjectNameRef
	if err := s.t.GetItem(ctx, schema.ProjectNameKey(companyID, name), &ref); err != nil {
		return schema.Project{}, err
	}
	return s.GetProject(ctx, companyID, ref.ProjectID)
}

// AllProjects returns every project of a company, by id.
func (s *Catalog) AllProjects(ctx context.Context, companyID int64) ([]schema.Project, error) {
	var out []schema.Project
	err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), schema.ProjectSKPrefix), true, &out)
	return out, err
}

// ProjectsByID reads the company's projects with these ids (by key); ids
// that are not the company's projects are absent from the map.
func (s *Catalog) ProjectsByID(ctx context.Context, companyID int64, ids []int64) (map[int64]schema.Project, error) {
	return ddb.ByID(ctx, s.t, ids, func(id int64) ddb.Key { return schema.ProjectKey(companyID, id) }, func(p schema.Project) int64 { return p.ID })
}
