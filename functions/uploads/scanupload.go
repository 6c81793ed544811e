package uploads

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/reports"
	"github.com/acme/codescan-api/shared/repourl"
	"github.com/acme/codescan-api/shared/scanlife"
)

// MaxFindings bounds the results of one report: GitHub code scanning's
// 25,000. Ingestion is asynchronous (the ingester worker), so the request
// no longer has to write them within API Gateway's 29 s.
const MaxFindings = ingest.MaxFindings

// maxNameLen bounds the project and branch names and the CI platform.
const maxNameLen = 255

// Defaults for what neither the upload nor the report names.
const (
	defaultBranch = "default"
)

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
// it, creates its scan (scanlife.Accept) and answers the scan's ids.
func (h handlers) accept(w http.ResponseWriter, r *http.Request, company int64, p scanParams, sent []byte) error {
	rep, err := scanlife.Check(p.engine, sent)
	if err != nil {
		return uploadRefusal(err)
	}
	if p.branch == "" {
		p.branch = rep.Parsed.Branch
	}
	if p.branch == "" || utf8.RuneCountInString(p.branch) > maxNameLen {
		p.branch = defaultBranch
	}
	if p.repoURL == "" {
		p.repoURL, _ = repourl.Normalize(rep.Parsed.RepositoryURI)
	}
	category, err := scanCategory(p, rep.Parsed.Category)
	if err != nil {
		return err
	}
	// The digest is the decompressed report's: the same report sent
	// compressed or not is the same upload.
	sum := sha256.Sum256(rep.Body)
	sc, proj, err := scanlife.Accept(r.Context(), h.life, h.reports, scanlife.Upload{
		CompanyID: company, RunID: p.runID, Project: p.project, RepoURL: p.repoURL,
		Branch: p.branch, Engine: p.engine, Category: category, CI: p.ci, CIPlatform: p.ciPlatform,
		Tool: ingest.Tool(rep.Parsed, p.engine), Digest: hex.EncodeToString(sum[:]), Sent: sent,
	})
	if err != nil {
		return uploadRefusal(err)
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "sast_scan_id": sc.ID, "project_id": proj.ID})
}

// uploadRefusal is a refusal of the scan's life as the upload routes
// answer it; other errors as they are.
func uploadRefusal(err error) error {
	var ref *scanlife.Refused
	if !errors.As(err, &ref) {
		return err
	}
	kind := map[scanlife.Kind]httpapi.Kind{scanlife.Invalid: httpapi.KindInvalid, scanlife.TooLarge: httpapi.KindTooLarge,
		scanlife.Conflict: httpapi.KindConflict}[ref.Kind]
	return httpapi.UploadError(kind, "%s", ref.Message)
}
