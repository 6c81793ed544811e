// Package issues serves the findings read APIs: SAST issues grouped by CWE
// or file with their counts, the drill-down list behind a group, a scan's
// code quality findings and one SCA finding.
package issues

import (
	"errors"
	"net/http"
	"path"
	"strconv"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/cwe"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/findings"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
)

type handlers struct {
	store Store
	exp   exportDeps
	now   func() time.Time // what an acceptance's end is checked against
	// tickets reads the tickets issue answers show (shared/store/tickets).
	tickets ticketReads
}

// New returns the group's http.Handler.
func New(d config.Deps) http.Handler {
	h := handlers{store: StoreOf(d.Store), exp: exportDeps{bucket: d.Exports, linkTTL: d.ExportLinkTTL, now: d.Clock()}, now: d.Clock(),
		tickets: storetickets.New(d.Store.Client(), d.Store.TableName(), d.Clock())}
	return d.Server.Group(routes.GroupIssues, map[string]httpapi.HandlerFunc{
		"GET /issues/groups":                 h.groups,
		"GET /issues":                        h.list,
		"GET /scan/{scan_id}/issues/quality": h.quality,
		"GET /issues/sca/{issue_id}":         h.sca,
		"GET /issue/{issue_id}":              h.issue,
		"GET /issue/{issue_id}/history":      h.history,
		"PATCH /issue/{issue_id}":            h.patch,
		"POST /issues/triage":                h.triage,
		"GET /issues/triage/{operation_id}":  h.getTriage,
		"GET /scan/{scan_id}/issues":         h.scanIssues,
		"GET /scan/{scan_id}/issues/sca":     h.scanSCA,
		"GET /issues/sca":                    h.projectSCA,
		"GET /issues/code-quality":           h.projectQuality,
		"GET /metrics/trend":                 h.trend,
		"POST /exports":                      h.createExport,
		"GET /exports/{export_id}":           h.getExport,
	})
}

// Paging limits.
const (
	defaultPageSize = 20
	maxPageSize     = 100
	maxQualitySize  = 50
)

var noProjectFound = map[string]string{"status": "no_project_found"}

type cweRef struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// UnknownCWE is the id shown (and accepted by the cwe filter) for findings
// that carry no CWE.
const UnknownCWE = "unknown"

// cweOf names a stored CWE number from the embedded MITRE catalogue.
func cweOf(n int) cweRef {
	if n == findings.NoCWE {
		return cweRef{ID: UnknownCWE, Name: "No CWE", Description: "Findings whose rule names no CWE weakness."}
	}
	id := cwe.FormatID(n)
	if e, ok := cwe.Lookup(n); ok {
		return cweRef{ID: id, Name: e.Name, Description: e.Description}
	}
	return cweRef{ID: id, Name: id, Description: id + " is not in the MITRE CWE catalogue " + cwe.Version + "."}
}

type fileRef struct {
	Path string `json:"path"`
	Name string `json:"name"`
}

func fileOf(p string) fileRef { return fileRef{Path: p, Name: path.Base(p)} }

type breakdown struct {
	ByUrgency map[string]int64 `json:"by_urgency"`
	ByStatus  map[string]int64 `json:"by_status"`
}

type group struct {
	CWE        *cweRef    `json:"cwe,omitempty"`
	File       *fileRef   `json:"file,omitempty"`
	IssueCount int64      `json:"issue_count"`
	Breakdown  *breakdown `json:"breakdown,omitempty"`
}

// groups answers GET /issues/groups from the group counters: one summary
// item and one page of counters for a single scope; every touched scope's
// counters, merged, when the filters span several projects or count one
// status (issuelists.ListMergedGroups).
func (h handlers) groups(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	companyID := auth.FromContext(ctx).CompanyID
	dim := schema.ByCWE
	switch v := r.URL.Query().Get("group_by"); v {
	case "", "cwe":
	case "file_path":
		dim = schema.ByFile
	default:
		return httpapi.Invalid("group_by must be cwe or file_path")
	}
	withBreakdown, err := httpapi.BoolParam(r, "breakdown")
	if err != nil {
		return err
	}
	pg, err := httpapi.ParsePaging(r, defaultPageSize, maxPageSize)
	if err != nil {
		return err
	}
	scopes, err := h.scopes(ctx, companyID, r.URL.Query())
	if errors.Is(err, errNoProject) {
		return httpapi.WriteJSON(w, http.StatusOK, noProjectFound)
	}
	if err != nil {
		return err
	}
	status := ""
	if v := r.URL.Query().Get("status"); v != "" {
		if status, err = parseStatus(v, findings.Statuses); err != nil {
			return err
		}
	}
	// Groups page by number: a token is not read here.
	q := storepage.Request{Limit: pg.PageSize, Offset: pg.Offset()}
	var page storepage.Page[findings.GroupCount]
	if status == "" && len(scopes) == 1 {
		page, err = h.store.Lists.ListGroups(ctx, companyID, scopes[0], dim, q)
	} else {
		page, err = h.store.Lists.ListMergedGroups(ctx, companyID, scopes, dim, status, q)
	}
	if err != nil {
		return err
	}
	out := storepage.Map(page, func(g findings.GroupCount) group { return groupView(g, dim, withBreakdown) })
	return httpapi.WriteList(w, pg, httpapi.List{Rows: "groups", Total: "total_groups", Page: true, TotalPages: true, ByNumber: true}, out)
}

// groupView is how the groups list shows one group.
func groupView(g findings.GroupCount, dim schema.Dimension, withBreakdown bool) group {
	out := group{IssueCount: g.Count}
	if dim == schema.ByCWE {
		num, _ := strconv.Atoi(g.Group)
		c := cweOf(num)
		out.CWE = &c
	} else {
		f := fileOf(g.Group)
		out.File = &f
	}
	if withBreakdown {
		out.Breakdown = &breakdown{ByUrgency: g.Cells.ByUrgency(), ByStatus: g.Cells.ByStatus()}
	}
	return out
}
