package issues

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/cwe"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	storepage "github.com/acme/codescan-api/shared/store/page"
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
	return code, slices.Contains(findings.Urgencies, code)
}

// parseCWE accepts `CWE-79`, `79` or `unknown` (any case).
func parseCWE(v string) (int, bool) {
	if strings.EqualFold(strings.TrimSpace(v), UnknownCWE) {
		return findings.NoCWE, true
	}
	return cwe.Parse(v)
}

// list answers GET /issues: the issues behind the groups, with the same
// project filters plus `cwe`, `file_path_exact`, `urgency`, `status` and
// `accepted_until_before`.
func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	companyID := auth.FromContext(ctx).CompanyID
	pg, err := httpapi.ParsePaging(r, defaultPageSize, maxPageSize)
	if err != nil {
		return err
	}
	f, err := h.issueFilter(ctx, companyID, r.URL.Query())
	if errors.Is(err, errNoProject) {
		return httpapi.WriteJSON(w, http.StatusOK, noProjectFound)
	}
	if err != nil {
		return err
	}
	tf, err := parseTicketFilter(r.URL.Query())
	if err != nil {
		return err
	}
	listed, err := h.listIssues(ctx, companyID, f, tf, pg.Query())
	if err != nil {
		return err
	}
	out := storepage.Map(listed, func(i findings.Issue) issueJSON { return renderIssue(i, i.LastSeenScanID) })
	if err := h.withTickets(ctx, companyID, out.Items); err != nil {
		return err
	}
	return httpapi.WriteList(w, pg, issueList, out)
}

// issueFilter reads the drill-down filters (the project filters of
// GET /issues/groups plus `cwe`, `file_path_exact`, `urgency`, `status`);
// errNoProject when the project filters match no project.
func (h handlers) issueFilter(ctx context.Context, companyID int64, q url.Values) (issuelists.IssueFilter, error) {
	var f issuelists.IssueFilter
	if v := q.Get("cwe"); v != "" {
		n, ok := parseCWE(v)
		if !ok {
			return f, httpapi.Invalid("cwe must be a CWE id such as CWE-79 or 79, or %s", UnknownCWE)
		}
		f.CWE = &n
	}
	f.FilePath = q.Get("file_path_exact")
	if v := q.Get("urgency"); v != "" {
		code, ok := parseUrgency(v)
		if !ok {
			return f, httpapi.Invalid("urgency must be one of CR, HI, ME, LO (or critical, high, medium, low)")
		}
		f.Urgency = code
	}
	if v := q.Get("status"); v != "" {
		f.Status = strings.ToLower(strings.TrimSpace(v))
		if !slices.Contains(findings.Statuses, f.Status) {
			return f, httpapi.Invalid("status must be one of %s", strings.Join(findings.Statuses, ", "))
		}
	}
	if v := q.Get("accepted_until_before"); v != "" {
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(v))
		if err != nil {
			return f, httpapi.Invalid("accepted_until_before must be an RFC 3339 date-time")
		}
		if f.Status != "" && f.Status != "accepted_risk" {
			return f, httpapi.Invalid("accepted_until_before lists accepted risks: status must be accepted_risk or absent")
		}
		f.AcceptedBefore = t
	}
	scopes, err := h.scopes(ctx, companyID, q)
	f.Scopes = scopes
	return f, err
}
