package projects

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/store/ddb"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// scanJSON is a scan as the client's ScanResponse reads it: id and project
// (the name) as strings, status one of processing, complete, incomplete.
type scanJSON struct {
	ID           string            `json:"id"`
	Project      string            `json:"project"`
	ProjectID    int64             `json:"project_id"`
	Repo         *string           `json:"repo"`
	Branch       string            `json:"branch"`
	Status       string            `json:"status"`
	Engine       string            `json:"engine"`
	Category     string            `json:"category"` // the upload's category, "" for none
	CreatedAt    string            `json:"created_at"`
	CompletedAt  *string           `json:"completed_at,omitempty"`
	GitSHA       *string           `json:"git_sha"`
	Findings     int               `json:"findings"`
	FailedReason *string           `json:"failed_reason,omitempty"`
	ScanErrors   []scans.ScanError `json:"scan_errors"`
	Metadata     map[string]any    `json:"metadata"`
	// PullRequestID is a string, as the real client reads it.
	PullRequestID *string          `json:"pull_request_id"`
	PullRequest   *pullRequestJSON `json:"pull_request"`
}

// pullRequestJSON is the pull request a scan built.
type pullRequestJSON struct {
	Provider   string  `json:"provider"`
	Host       string  `json:"host"`
	Repo       string  `json:"repo"`
	Number     string  `json:"number"`
	HeadSHA    *string `json:"head_sha"`
	HeadBranch *string `json:"head_branch"`
	BaseBranch *string `json:"base_branch"`
}

func pullRequestView(pr *pullrequest.PullRequest) (*string, *pullRequestJSON) {
	if pr == nil {
		return nil, nil
	}
	v := &pullRequestJSON{Provider: pr.Provider, Host: pr.Host, Repo: pr.Repo, Number: pr.Number}
	for dst, src := range map[**string]string{&v.HeadSHA: pr.HeadSHA, &v.HeadBranch: pr.HeadBranch, &v.BaseBranch: pr.BaseBranch} {
		if src != "" {
			*dst = &src
		}
	}
	return &v.Number, v
}

// status is a scan's status; scans stored before statuses existed are
// complete.
func status(sc scans.Scan) string {
	if sc.Status == "" {
		return scans.ScanComplete
	}
	return sc.Status
}

func scanView(sc scans.Scan, projectName string) scanJSON {
	v := scanJSON{ID: sc.ID, Project: projectName, ProjectID: sc.ProjectID, Branch: sc.Branch, Status: status(sc),
		Engine: sc.Engine, Category: sc.Category, CreatedAt: sc.CreatedAt, Findings: sc.Findings, ScanErrors: httpapi.Array(sc.ScanErrors),
		Metadata: map[string]any{"tool": sc.Tool, "ci": sc.CI, "ci_platform": sc.CIPlatform, "run_id": sc.RunID}}
	for dst, src := range map[**string]string{&v.Repo: sc.RepoURL, &v.GitSHA: sc.GitSHA, &v.CompletedAt: sc.CompletedAt} {
		if src != "" {
			*dst = &src
		}
	}
	v.PullRequestID, v.PullRequest = pullRequestView(sc.PullRequest)
	if v.Status == scans.ScanIncomplete {
		reason := sc.FailedReason
		v.FailedReason = &reason
	}
	return v
}

var errScanNotFound = httpapi.NotFound("Scan not found")

// scanOf reads a scan of the caller's company; another company's id, or
// one that is no uuid, answers like a missing one.
func (h handlers) scanOf(r *http.Request) (scans.Scan, schema.Project, error) {
	company := auth.FromContext(r.Context()).CompanyID
	sc, err := h.store.Scans.GetScan(r.Context(), company, r.PathValue("scan_id"))
	if errors.Is(err, ddb.ErrNotFound) {
		return scans.Scan{}, schema.Project{}, errScanNotFound
	}
	if err != nil {
		return scans.Scan{}, schema.Project{}, err
	}
	p, err := h.store.Catalog.GetProject(r.Context(), company, sc.ProjectID)
	return sc, p, err
}

func (h handlers) getScan(w http.ResponseWriter, r *http.Request) error {
	sc, p, err := h.scanOf(r)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, scanView(sc, p.Name))
}

var scanStatuses = []string{scans.ScanProcessing, scans.ScanComplete, scans.ScanIncomplete}

// listScans pages the company's scans newest first: of a project (by name)
// and branch by key; sha and status filter the project's scans.
func (h handlers) listScans(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	company := auth.FromContext(ctx).CompanyID
	pg, err := httpapi.ParsePaging(r, DefaultScanPageSize, MaxPageSize)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	name := strings.TrimSpace(q.Get("project"))
	query := scans.ScanQuery{Branch: strings.TrimSpace(q.Get("branch")), SHA: strings.TrimSpace(q.Get("sha")),
		Status: strings.ToLower(strings.TrimSpace(q.Get("status")))}
	if query.Status != "" && !slices.Contains(scanStatuses, query.Status) {
		return httpapi.Invalid("status must be one of processing, complete, incomplete")
	}
	names := map[int64]string{}
	if name != "" {
		p, err := h.store.Catalog.ProjectByName(ctx, company, name)
		if errors.Is(err, ddb.ErrNotFound) {
			return errProjectNotFound
		}
		if err != nil {
			return err
		}
		query.ProjectID, names[p.ID] = p.ID, p.Name
	} else if query.Branch != "" || query.SHA != "" || query.Status != "" {
		return httpapi.Invalid("branch, sha and status need project")
	}
	page, err := h.store.Scans.ListScans(ctx, company, query, pg.Query())
	if err != nil {
		return err
	}
	out := storepage.Page[scanJSON]{Items: make([]scanJSON, 0, len(page.Items)), Offset: page.Offset, Next: page.Next, Total: page.Total}
	for _, sc := range page.Items {
		n, err := h.projectName(ctx, company, sc.ProjectID, names)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, scanView(sc, n))
	}
	// A filtered list's total is unknown: total_scans is then left out.
	return httpapi.WriteList(w, pg, httpapi.Numbered("scans", "total_scans"), out)
}

// projectName reads a project's name once per request.
func (h handlers) projectName(ctx context.Context, company, id int64, names map[int64]string) (string, error) {
	if n, ok := names[id]; ok {
		return n, nil
	}
	p, err := h.store.Catalog.GetProject(ctx, company, id)
	if err != nil {
		return "", err
	}
	names[id] = p.Name
	return p.Name, nil
}
