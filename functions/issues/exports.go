package issues

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/exportformat"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/exports"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/schema"
)

// exportDeps are what the export routes need beside the store.
type exportDeps struct {
	bucket  reportstore.Exports
	linkTTL time.Duration
	now     func() time.Time
}

// staleAfter is how long a running export may go without ending before
// its reader is told it stopped: past the ingester function's timeout (15
// minutes), no attempt runs any more.
const staleAfter = 20 * time.Minute

var (
	errExportNotFound   = httpapi.NotFound("Export not found")
	errExportsDisabled  = httpapi.Unavailable("Exports are not configured")
	errCompanyWide      = httpapi.Denied("An export without the project filter covers the whole company and needs a company admin")
	errVEXNeedsProject  = httpapi.Invalid("format vex needs the project filter, and takes no other")
	errUnknownExportFmt = httpapi.Invalid("format must be one of csv, jsonl, sarif, vex")
)

// exportJSON is an export as the API shows it.
type exportJSON struct {
	ID           string            `json:"id"`
	Format       string            `json:"format"`
	Filters      map[string]string `json:"filters"`
	Status       string            `json:"status"`
	RowsRead     int64             `json:"rows_read"`
	RowsExpected int64             `json:"rows_expected"`
	Rows         *int64            `json:"rows"`
	Bytes        *int64            `json:"bytes"`
	Error        string            `json:"error,omitempty"`
	CreatedAt    string            `json:"created_at"`
	StartedAt    *string           `json:"started_at"`
	FinishedAt   *string           `json:"finished_at"`
	ExpiresAt    string            `json:"expires_at"`
	Download     *downloadJSON     `json:"download,omitempty"`
}

type downloadJSON struct {
	URL       string `json:"url"`
	Filename  string `json:"filename"`
	ExpiresAt string `json:"expires_at"`
}

// createExport answers POST /exports: the issue list's filters (as the
// bulk triage takes them) and a format start an export job, answered 202;
// the export worker writes it. Filters matching no project answer as the
// list does (200 no_project_found) and create nothing. The route is
// Idempotent in the route table: the edge replays the first answer to a
// retry with the same Idempotency-Key, so a retried request never starts
// a second export.
func (h handlers) createExport(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p := auth.FromContext(ctx)
	var req struct {
		Format  string            `json:"format"`
		Filters map[string]string `json:"filters"`
	}
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	f := exportformat.Format(strings.ToLower(strings.TrimSpace(req.Format)))
	if !slices.Contains(exportformat.Formats, f) {
		return errUnknownExportFmt
	}
	q, err := filterQuery(req.Filters)
	if err != nil {
		return err
	}
	if f == exportformat.VEX && (len(q) != 1 || q.Get("project") == "") {
		return errVEXNeedsProject
	}
	if q.Get("project") == "" && !p.IsAdmin {
		return errCompanyWide
	}
	if h.exp.bucket == nil {
		return errExportsDisabled
	}
	e := schema.ExportItem{CompanyID: p.CompanyID, UserID: p.UserID, Format: string(f)}
	sf, err := h.issueFilter(ctx, p.CompanyID, q)
	if f == exportformat.VEX && err == nil {
		// The document covers the project's SCA findings, every branch.
		var proj schema.Project
		if proj, err = h.store.Catalog.ProjectByName(ctx, p.CompanyID, q.Get("project")); err == nil {
			e.ProjectID, e.Project = proj.ID, proj.Name
		}
		if errors.Is(err, ddb.ErrNotFound) {
			err = errNoProject
		}
	}
	if errors.Is(err, errNoProject) {
		return httpapi.WriteJSON(w, http.StatusOK, noProjectFound)
	}
	if err != nil {
		return err
	}
	if e.Query, err = issuelists.EncodeFilter(sf); err != nil {
		return err
	}
	filters := map[string]string{}
	for k := range q {
		filters[k] = q.Get(k)
	}
	raw, err := json.Marshal(filters)
	if err != nil {
		return err
	}
	e.Filters = string(raw)
	if e, err = h.store.Exports.CreateExport(ctx, e); err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusAccepted, map[string]any{"status": "ok", "export": h.renderExport(e, "")})
}

// getExport answers GET /exports/{export_id}: the export's state and
// progress and, once done, a link that downloads it for a while. Only its
// creator and the company's admins see it; to anyone else, as to another
// company, it does not exist. So does an export past its lifetime.
func (h handlers) getExport(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p := auth.FromContext(ctx)
	e, err := h.store.Exports.GetExport(ctx, p.CompanyID, r.PathValue("export_id"))
	if errors.Is(err, ddb.ErrNotFound) || (err == nil && !p.IsAdmin && e.UserID != p.UserID) ||
		(err == nil && !h.exp.now().Before(time.Unix(e.ExpiresAt, 0))) {
		return errExportNotFound
	}
	if err != nil {
		return err
	}
	link := ""
	if e.Status == exports.Done {
		if h.exp.bucket == nil {
			return errExportsDisabled
		}
		if link, err = h.exp.bucket.Link(ctx, e.ObjectKey, exportFilename(e), h.linkTTL()); err != nil {
			return err
		}
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "export": h.renderExport(e, link)})
}

func (h handlers) linkTTL() time.Duration {
	if h.exp.linkTTL > 0 {
		return h.exp.linkTTL
	}
	return config.DefaultExportLinkTTL
}

// exportFilename is the name an export downloads under.
func exportFilename(e schema.ExportItem) string {
	return "issues-export-" + e.ID + exportformat.Format(e.Format).Extension()
}

// renderExport shows e; link is its download link (done exports only).
func (h handlers) renderExport(e schema.ExportItem, link string) exportJSON {
	out := exportJSON{ID: e.ID, Format: e.Format, Filters: map[string]string{}, Status: e.Status,
		RowsRead: e.RowsRead, RowsExpected: e.RowsExpected, Error: e.Error, CreatedAt: e.CreatedAt,
		ExpiresAt: time.Unix(e.ExpiresAt, 0).UTC().Format(time.RFC3339)}
	_ = json.Unmarshal([]byte(e.Filters), &out.Filters)
	if e.StartedAt != "" {
		out.StartedAt = &e.StartedAt
	}
	if e.FinishedAt != "" {
		out.FinishedAt = &e.FinishedAt
	}
	if e.Status == exports.Running {
		if at, err := time.Parse(time.RFC3339, e.StartedAt); err == nil && h.exp.now().Sub(at) > staleAfter {
			out.Status, out.Error = exports.Failed, "the export stopped without finishing; create it again"
		}
	}
	if e.Status == exports.Done {
		out.Rows, out.Bytes = &e.Rows, &e.Bytes
		if link != "" {
			out.Download = &downloadJSON{URL: link, Filename: exportFilename(e),
				ExpiresAt: h.exp.now().Add(h.linkTTL()).UTC().Format(time.RFC3339)}
		}
	}
	return out
}
