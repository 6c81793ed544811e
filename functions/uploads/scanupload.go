package uploads

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/reports"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/repourl"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// MaxFindings bounds the results of one report: GitHub code scanning's
// 25,000. Ingestion is asynchronous (the ingester worker), so the request
// no longer has to write them within API Gateway's 29 s.
const MaxFindings = ingest.MaxFindings

// formatNames name each engine's report format in answers.
var formatNames = map[string]string{
	"sarif": "SARIF", "codeql": "SARIF", "snyk": "SARIF", "semgrep": "Semgrep",
	"govulncheck": "govulncheck", "osv-scanner": "OSV-Scanner", "cyclonedx": "CycloneDX",
	"spdx": "SPDX",
}

// maxNameLen bounds the project and branch names and the CI platform.
const maxNameLen = 255

// Defaults for what neither the upload nor the report names.
const (
	defaultBranch = "default"
)

// idSpace is the namespace of the name-based (SHA-1) UUIDs of uploaded scans
// and their issues: the same company, run and result always get the same
// ids, which is what makes retried uploads idempotent.
var idSpace = uuid.MustParse("6f1b6c0e-3d4a-4f2e-9b8a-2c5d7e9f1a30")

// scanParams are the query parameters of a scan upload.
type scanParams struct {
	engine, runID, project, branch, repoURL, ciPlatform string
	ci                                                  bool
	// category is the query parameter's (see category.go), categorySet
	// whether it was given.
	category    string
	categorySet bool
}

func parseScanParams(r *http.Request) (scanParams, error) {
	q := r.URL.Query()
	engine := strings.ToLower(strings.TrimSpace(q.Get("engine")))
	switch {
	case engine == "":
		return scanParams{}, httpapi.UploadError(httpapi.KindInvalid, "Missing engine (supported engines: %s)", strings.Join(reports.Engines(), ", "))
	case !slices.Contains(reports.Engines(), engine):
		return scanParams{}, httpapi.UploadError(httpapi.KindInvalid, "Unsupported engine %q (supported engines: %s)", engine, strings.Join(reports.Engines(), ", "))
	}
	run, err := runID(r)
	if err != nil {
		return scanParams{}, err
	}
	p := scanParams{
		engine:     engine,
		runID:      run,
		project:    strings.TrimSpace(q.Get("project")),
		branch:     strings.TrimSpace(q.Get("branch")),
		ciPlatform: strings.TrimSpace(q.Get("ci_platform")),
	}
	if p.project == "" {
		return scanParams{}, httpapi.UploadError(httpapi.KindInvalid, "Missing project")
	}
	for name, v := range map[string]string{"project": p.project, "branch": p.branch, "ci_platform": p.ciPlatform} {
		if utf8.RuneCountInString(v) > maxNameLen {
			return scanParams{}, httpapi.UploadError(httpapi.KindInvalid, "%s is longer than %d characters", name, maxNameLen)
		}
	}
	if p.ci, err = httpapi.BoolParam(r, "ci"); err != nil {
		return scanParams{}, err
	}
	if p.categorySet = q.Has("category"); p.categorySet {
		if p.category, err = normalCategory(q.Get("category"), ""); err != nil {
			return scanParams{}, err
		}
	}
	// repo_url is metadata the client derives as best it can: one that is
	// not a remote repository URL is ignored rather than failing the scan.
	p.repoURL, _ = repourl.Normalize(q.Get("repo_url"))
	return p, nil
}

// scanUpload accepts a third-party report: whole, or in chunks
// (Upload-Offset / Upload-Length, see chunks.go). The report is checked
// (parsed) before anything is written, so an invalid one is 400 at once;
// then it is stored in the report bucket, the project (created on first
// upload) and the scan of the run are created, the scan in status
// processing, and the answer goes out. The new scan item reaches the
// ingester through the table's stream, which writes the findings and
// completes the scan. A retry with the same run id and report finds the
// scan and answers the same; a different report for a run id already used
// is 409.
func (h handlers) scanUpload(w http.ResponseWriter, r *http.Request) error {
	company := auth.FromContext(r.Context()).CompanyID
	p, err := parseScanParams(r)
	if err != nil {
		return err
	}
	c, chunked, err := parseChunk(r)
	if err != nil {
		return err
	}
	body, err := httpapi.ReadBody(r, MaxReportBytes)
	var e *httpapi.Error
	if errors.As(err, &e) && e.Status == http.StatusRequestEntityTooLarge {
		return httpapi.UploadError(httpapi.KindTooLarge,
			"The request body exceeds the upload limit of %s as sent (%s decompressed); send a larger report gzip-compressed or in chunks (Upload-Offset, Upload-Length)",
			size(ingest.MaxCompressedBytes), size(MaxReportBytes))
	}
	if err != nil {
		return err
	}
	if chunked {
		return h.chunk(w, r, company, p, c, body)
	}
	return h.accept(w, r, company, p, body)
}

// accept checks a whole report (as sent: gzip-compressed or not), stores
// it, creates its scan and answers the scan's ids.
func (h handlers) accept(w http.ResponseWriter, r *http.Request, company int64, p scanParams, sent []byte) error {
	if ingest.IsGzip(sent) && len(sent) > ingest.MaxCompressedBytes {
		return httpapi.UploadError(httpapi.KindTooLarge, "The compressed report exceeds the upload limit of %s", size(ingest.MaxCompressedBytes))
	}
	body, err := ingest.Decode(sent)
	switch {
	case errors.Is(err, ingest.ErrBadGzip):
		return httpapi.UploadError(httpapi.KindInvalid, "The report is not valid gzip")
	case errors.Is(err, ingest.ErrTooLarge):
		return httpapi.UploadError(httpapi.KindTooLarge, "The decompressed report exceeds the upload limit of %s", size(MaxReportBytes))
	case err != nil:
		return err
	}
	rep, err := reports.Parse(p.engine, body)
	var bad *reports.InvalidError
	if errors.As(err, &bad) {
		return httpapi.UploadError(httpapi.KindInvalid, "Invalid %s report: %s", formatNames[p.engine], bad.Problem)
	}
	var big *reports.TooLargeError
	if errors.As(err, &big) {
		return httpapi.UploadError(httpapi.KindTooLarge, "The report has more than %d %s", big.Limit, big.What)
	}
	if err != nil {
		return err
	}
	if n := len(rep.Findings); n > MaxFindings {
		return httpapi.UploadError(httpapi.KindTooLarge, "The report has %d results; at most %d are accepted per upload", n, MaxFindings)
	}
	if p.branch == "" {
		p.branch = rep.Branch
	}
	if p.branch == "" || utf8.RuneCountInString(p.branch) > maxNameLen {
		p.branch = defaultBranch
	}
	if p.repoURL == "" {
		p.repoURL, _ = repourl.Normalize(rep.RepositoryURI)
	}
	category, err := scanCategory(p, rep.Category)
	if err != nil {
		return err
	}
	p.category = category
	// The digest is the decompressed report's: the same report sent
	// compressed or not is the same upload.
	sum := sha256.Sum256(body)
	digest := hex.EncodeToString(sum[:])
	sc, proj, err := h.scanFor(r.Context(), company, p, digest, ingest.Tool(rep, p.engine), sent)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "sast_scan_id": sc.ID, "project_id": proj.ID})
}

// scanFor returns the run's scan and its project: the one a first attempt
// (or a concurrent one) created, or a new one, whose report it stores in
// the bucket first (under a key naming the report's digest, so a
// concurrent attempt with another report never replaces it): a scan item
// exists only once its report does, and its creation is what starts the
// ingester.
func (h handlers) scanFor(ctx context.Context, company int64, p scanParams, digest, tool string, sent []byte) (scans.Scan, schema.Project, error) {
	sc, err := h.store.Scans.ScanByRunID(ctx, company, p.runID)
	if err == nil {
		return h.retried(ctx, company, sc, p, digest)
	}
	if !errors.Is(err, ddb.ErrNotFound) {
		return scans.Scan{}, schema.Project{}, err
	}
	scanID := uuid.NewSHA1(idSpace, fmt.Appendf(nil, "scan/%d/%s", company, p.runID)).String()
	if err := h.reports.Put(ctx, reportstore.ReportKey(company, scanID, digest), sent); err != nil {
		return scans.Scan{}, schema.Project{}, err
	}
	proj, err := h.project(ctx, company, p.project, p.repoURL, p.branch)
	if err != nil {
		return scans.Scan{}, schema.Project{}, err
	}
	sc, err = h.store.Scans.CreateScan(ctx, scans.Scan{
		ID: scanID, CompanyID: company,
		ProjectID: proj.ID, Branch: p.branch, Engine: p.engine, RunID: p.runID, RepoURL: p.repoURL,
		ReportSHA256: digest, CI: p.ci, CIPlatform: p.ciPlatform, Tool: tool, Category: p.category, Status: scans.ScanProcessing,
	})
	if errors.Is(err, ddb.ErrConflict) {
		// A concurrent attempt of the same run created it first.
		if sc, err = h.store.Scans.ScanByRunID(ctx, company, p.runID); err == nil {
			return h.retried(ctx, company, sc, p, digest)
		}
	}
	return sc, proj, err
}

// retried accepts a repeated upload of a run: same report, same project.
func (h handlers) retried(ctx context.Context, company int64, sc scans.Scan, p scanParams, digest string) (scans.Scan, schema.Project, error) {
	if sc.ReportSHA256 != digest {
		return scans.Scan{}, schema.Project{}, httpapi.UploadError(httpapi.KindConflict,
			"run_id %s was already uploaded with a different report; a new report needs a new run_id", p.runID)
	}
	proj, err := h.store.Catalog.GetProject(ctx, company, sc.ProjectID)
	if err != nil {
		return scans.Scan{}, schema.Project{}, err
	}
	if !strings.EqualFold(proj.Name, p.project) {
		return scans.Scan{}, schema.Project{}, httpapi.UploadError(httpapi.KindConflict,
			"run_id %s was already uploaded for another project", p.runID)
	}
	return sc, proj, nil
}

// project finds the company's project by name or creates it (its default
// branch the first upload's); a project without a repository URL gets the
// upload's.
func (h handlers) project(ctx context.Context, company int64, name, repoURL, branch string) (schema.Project, error) {
	proj, err := h.store.Catalog.ProjectByName(ctx, company, name)
	if errors.Is(err, ddb.ErrNotFound) {
		proj, err = h.store.Catalog.CreateProject(ctx, schema.Project{CompanyID: company, Name: name, RepoURL: repoURL, DefaultBranch: branch})
		if errors.Is(err, ddb.ErrConflict) {
			// Created concurrently (the name is guarded): use that one.
			proj, err = h.store.Catalog.ProjectByName(ctx, company, name)
		}
	}
	if err != nil {
		return schema.Project{}, err
	}
	if proj.RepoURL == "" && repoURL != "" {
		if err := h.store.Catalog.SetProjectRepoURLIfEmpty(ctx, company, proj.ID, repoURL); err != nil {
			return schema.Project{}, err
		}
	}
	return proj, nil
}
