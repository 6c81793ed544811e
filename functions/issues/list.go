package issues

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/cwe"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store"
)

// urgencyWords are the long names clients may send for urgency codes.
var urgencyWords = map[string]string{"critical": "CR", "high": "HI", "medium": "ME", "low": "LO"}

// parseUrgency accepts a code or its word, in any case.
func parseUrgency(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if code, ok := urgencyWords[strings.ToLower(v)]; ok {
		return code, true
	}
	code := strings.ToUpper(v)
	return code, slices.Contains(store.Urgencies, code)
}

// parseCWE accepts `CWE-79`, `79` or `unknown` (any case).
func parseCWE(v string) (int, bool) {
	if strings.EqualFold(strings.TrimSpace(v), UnknownCWE) {
		return store.NoCWE, true
	}
	return cwe.Parse(v)
}

type issueOut struct {
	ID        string     `json:"id"`
	Title     string     `json:"title"`
	RuleID    string     `json:"rule_id"`
	CWE       cweName    `json:"cwe"`
	Urgency   string     `json:"urgency"`
	Status    string     `json:"status"`
	Location  issueWhere `json:"location"`
	ScanID    *string    `json:"scan_id"`
	CreatedAt string     `json:"created_at"`
}

type cweName struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type issueWhere struct {
	File       fileRef    `json:"file"`
	LineNumber int        `json:"line_number"`
	Project    projectRef `json:"project"`
}

type projectRef struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Branch string `json:"branch"`
}

// list answers GET /issues: the issues behind the groups, with the same
// project filters plus `cwe`, `file_path_exact`, `urgency` and `status`.
func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	companyID := auth.FromContext(ctx).CompanyID
	q := r.URL.Query()
	var f store.IssueFilter
	if v := q.Get("cwe"); v != "" {
		n, ok := parseCWE(v)
		if !ok {
			return httpapi.Errorf(http.StatusBadRequest, "cwe must be a CWE id such as CWE-79 or 79, or %s", UnknownCWE)
		}
		f.CWE = &n
	}
	f.FilePath = q.Get("file_path_exact")
	if v := q.Get("urgency"); v != "" {
		code, ok := parseUrgency(v)
		if !ok {
			return httpapi.Errorf(http.StatusBadRequest, "urgency must be one of CR, HI, ME, LO (or critical, high, medium, low)")
		}
		f.Urgency = code
	}
	if v := q.Get("status"); v != "" {
		f.Status = strings.ToLower(strings.TrimSpace(v))
		if !slices.Contains(store.Statuses, f.Status) {
			return httpapi.Errorf(http.StatusBadRequest, "status must be one of %s", strings.Join(store.Statuses, ", "))
		}
	}
	pg, err := httpapi.ParsePaging(r, defaultPageSize, maxPageSize)
	if err != nil {
		return err
	}
	scopes, err := h.scopes(r)
	if errors.Is(err, errNoProject) {
		return httpapi.WriteJSON(w, http.StatusOK, noProjectFound)
	}
	if err != nil {
		return err
	}
	f.Scopes = scopes
	page, total, err := h.store.ListIssues(ctx, companyID, f, pg.Offset(), pg.PageSize)
	if err != nil {
		return err
	}
	out := make([]issueOut, len(page))
	for n, i := range page {
		c := cweOf(i.CWE)
		out[n] = issueOut{
			ID: i.ID, Title: i.Title, RuleID: i.RuleID, CWE: cweName{ID: c.ID, Name: c.Name},
			Urgency: i.Urgency, Status: i.Status, CreatedAt: i.CreatedAt,
			Location: issueWhere{File: fileOf(i.FilePath), LineNumber: i.Line,
				Project: projectRef{ID: i.ProjectID, Name: i.ProjectName, Branch: i.Branch}},
		}
		if i.ScanID != "" {
			out[n].ScanID = &i.ScanID
		}
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"status": "ok", "page": pg.Page, "total_pages": pg.TotalPages(int(total)),
		"total_issues": total, "issues": out,
	})
}
