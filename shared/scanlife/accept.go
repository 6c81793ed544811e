package scanlife

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// idSpace is the namespace of the name-based (SHA-1) UUIDs of uploaded
// scans: the same company and run always get the same id, which is what
// makes retried uploads idempotent.
var idSpace = uuid.MustParse("6f1b6c0e-3d4a-4f2e-9b8a-2c5d7e9f1a30")

// ScanID is the id of the scan of a company's run.
func ScanID(companyID int64, runID string) string {
	return uuid.NewSHA1(idSpace, fmt.Appendf(nil, "scan/%d/%s", companyID, runID)).String()
}

// Upload is a checked report's upload: whose, of which run, for which
// project and branch, and the scan it makes.
type Upload struct {
	CompanyID                int64
	RunID, Project, RepoURL  string
	Branch, Engine, Category string
	CI                       bool
	CIPlatform               string
	Tool                     string // ingest.Tool of the report
	Digest                   string // the decompressed report's SHA-256, hex
	Sent                     []byte // the report as sent, stored as is
}

// Reports stores uploaded reports.
type Reports interface {
	Put(ctx context.Context, key string, data []byte) error
}

// Accept returns the run's scan and its project: the one a first attempt
// (or a concurrent one) created, or a new one, whose report it stores in
// the bucket first (under a key naming the report's digest, so a
// concurrent attempt with another report never replaces it): a scan item
// exists only once its report does, and its creation (status processing)
// is what starts the ingester. A run already uploaded with another report,
// or for another project, is refused (Conflict).
func Accept(ctx context.Context, st Store, rs Reports, u Upload) (scans.Scan, schema.Project, error) {
	sc, err := st.Scans.ScanByRunID(ctx, u.CompanyID, u.RunID)
	if err == nil {
		return retried(ctx, st, sc, u)
	}
	if !errors.Is(err, ddb.ErrNotFound) {
		return scans.Scan{}, schema.Project{}, err
	}
	scanID := ScanID(u.CompanyID, u.RunID)
	if err := rs.Put(ctx, reportstore.ReportKey(u.CompanyID, scanID, u.Digest), u.Sent); err != nil {
		return scans.Scan{}, schema.Project{}, err
	}
	proj, err := project(ctx, st, u.CompanyID, u.Project, u.RepoURL, u.Branch)
	if err != nil {
		return scans.Scan{}, schema.Project{}, err
	}
	sc, err = st.Scans.CreateScan(ctx, scans.Scan{
		ID: scanID, CompanyID: u.CompanyID,
		ProjectID: proj.ID, Branch: u.Branch, Engine: u.Engine, RunID: u.RunID, RepoURL: u.RepoURL,
		ReportSHA256: u.Digest, CI: u.CI, CIPlatform: u.CIPlatform, Tool: u.Tool, Category: u.Category, Status: scans.ScanProcessing,
	})
	if errors.Is(err, ddb.ErrConflict) {
		// A concurrent attempt of the same run created it first.
		if sc, err = st.Scans.ScanByRunID(ctx, u.CompanyID, u.RunID); err == nil {
			return retried(ctx, st, sc, u)
		}
	}
	return sc, proj, err
}

// retried accepts a repeated upload of a run: same report, same project.
func retried(ctx context.Context, st Store, sc scans.Scan, u Upload) (scans.Scan, schema.Project, error) {
	if sc.ReportSHA256 != u.Digest {
		return scans.Scan{}, schema.Project{}, refused(Conflict, "",
			"run_id %s was already uploaded with a different report; a new report needs a new run_id", u.RunID)
	}
	proj, err := st.Catalog.GetProject(ctx, u.CompanyID, sc.ProjectID)
	if err != nil {
		return scans.Scan{}, schema.Project{}, err
	}
	if !strings.EqualFold(proj.Name, u.Project) {
		return scans.Scan{}, schema.Project{}, refused(Conflict, "", "run_id %s was already uploaded for another project", u.RunID)
	}
	return sc, proj, nil
}

// project finds the company's project by name or creates it (its default
// branch the first upload's); a project without a repository URL gets the
// upload's.
func project(ctx context.Context, st Store, company int64, name, repoURL, branch string) (schema.Project, error) {
	proj, err := st.Catalog.ProjectByName(ctx, company, name)
	if errors.Is(err, ddb.ErrNotFound) {
		proj, err = st.Catalog.CreateProject(ctx, schema.Project{CompanyID: company, Name: name, RepoURL: repoURL, DefaultBranch: branch})
		if errors.Is(err, ddb.ErrConflict) {
			// Created concurrently (the name is guarded): use that one.
			proj, err = st.Catalog.ProjectByName(ctx, company, name)
		}
	}
	if err != nil {
		return schema.Project{}, err
	}
	if proj.RepoURL == "" && repoURL != "" {
		if err := st.Catalog.SetProjectRepoURLIfEmpty(ctx, company, proj.ID, repoURL); err != nil {
			return schema.Project{}, err
		}
	}
	return proj, nil
}
