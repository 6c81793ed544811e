package issues

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/exploits"
)

// The lists the real client reads besides the SAST ones: a scan's and a
// project's SCA findings, and a project's code quality findings. Pages of
// 30 by default (the client does not always send a size), at most 100.

// scanSCA answers GET /scan/{scan_id}/issues/sca, with the filters of
// GET /issues/sca (kev, epss_gte).
func (h handlers) scanSCA(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	companyID := auth.FromContext(ctx).CompanyID
	f, err := exploitFilter(r.URL.Query())
	if err != nil {
		return err
	}
	sc, pg, err := h.scanPage(r)
	if err != nil {
		return err
	}
	if f.Active() {
		return h.writeSCAPage(w, r, pg)(h.store.SCA.ListFilteredScanSCAIssues(ctx, companyID, sc, f, pg.Query()))
	}
	return h.writeSCAPage(w, r, pg)(h.store.SCA.ListScanSCAIssues(ctx, companyID, sc.ID, pg.Query()))
}

// projectSCA answers GET /issues/sca: the SCA findings of the project the
// `project` filter names (by name, any case), or of the whole company
// without it. An unknown project is 404 `no_project_found`. `kev=true`
// keeps the findings whose CVE is in CISA's KEV catalogue, `epss_gte` those
// whose EPSS score is at least its value (0 to 1); either lists highest
// score first.
func (h handlers) projectSCA(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	companyID := auth.FromContext(ctx).CompanyID
	pg, err := httpapi.ParsePaging(r, clientPageSize, maxPageSize)
	if err != nil {
		return err
	}
	f, err := exploitFilter(r.URL.Query())
	if err != nil {
		return err
	}
	var projectID int64
	if name := strings.TrimSpace(r.URL.Query().Get("project")); name != "" {
		p, err := h.store.Catalog.ProjectByName(ctx, companyID, name)
		if errors.Is(err, ddb.ErrNotFound) {
			return &httpapi.Error{Status: http.StatusNotFound, Body: noProjectFound}
		}
		if err != nil {
			return err
		}
		projectID = p.ID
	}
	if f.Active() {
		return h.writeSCAPage(w, r, pg)(h.store.SCA.ListFilteredSCAIssues(ctx, companyID, projectID, f, pg.Query()))
	}
	return h.writeSCAPage(w, r, pg)(h.store.SCA.ListSCAIssues(ctx, companyID, projectID, pg.Query()))
}

// exploitFilter reads kev (only "true") and epss_gte (a number from 0 to
// 1) of an SCA list.
func exploitFilter(q url.Values) (exploits.Filter, error) {
	var f exploits.Filter
	switch v := q.Get("kev"); v {
	case "":
	case "true":
		f.KEV = true
	default:
		return f, httpapi.Invalid("kev must be true")
	}
	if v := strings.TrimSpace(q.Get("epss_gte")); q.Has("epss_gte") {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x >= 0 && x <= 1) {
			return f, httpapi.Invalid("epss_gte must be a number from 0 to 1")
		}
		f.EPSSGte = &x
	}
	return f, nil
}

// projectQuality answers GET /issues/code-quality?project=: the quality
// findings of the project's scans, newest first. An unknown or missing
// project answers 200 `no_project_found`, as the SAST list does.
func (h handlers) projectQuality(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	companyID := auth.FromContext(ctx).CompanyID
	pg, err := httpapi.ParsePaging(r, clientPageSize, maxQualitySize)
	if err != nil {
		return err
	}
	p, err := h.store.Catalog.ProjectByName(ctx, companyID, strings.TrimSpace(r.URL.Query().Get("project")))
	if errors.Is(err, ddb.ErrNotFound) {
		return httpapi.WriteJSON(w, http.StatusOK, noProjectFound)
	}
	if err != nil {
		return err
	}
	page, err := h.store.Quality.ListProjectQualityIssues(ctx, companyID, p.ID, pg.Query())
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, pg, issueList, page)
}

// issueList is how the issue lists answer a page: page, total_pages,
// total_issues and, while a page follows, next_page_token.
var issueList = httpapi.List{Rows: "issues", Total: "total_issues", Page: true, TotalPages: true}
