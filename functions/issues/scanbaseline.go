package issues

import (
	"errors"
	"net/http"
	"strings"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/gate"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/findings"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// scanIssuesAgainst answers GET /scan/{scan_id}/issues?baseline=<branch>:
// only the scan's issues whose finding is not open on the baseline's latest
// complete scan (what the gate judges), paged by number, with the
// comparison's summary. It reads every issue of the scan, as the gate does.
func (h handlers) scanIssuesAgainst(w http.ResponseWriter, r *http.Request, sc scans.Scan, pg httpapi.Paging, baseline string) error {
	ctx := r.Context()
	companyID := auth.FromContext(ctx).CompanyID
	if pg.Token != "" {
		return httpapi.Invalid("%s cannot be combined with baseline; page by number", httpapi.TokenParam)
	}
	branch, err := gate.BaselineBranch(ctx, gate.Source{Baselines: h.store.Baselines, Scans: h.store.Scans}, sc, schema.Project{ID: sc.ProjectID}, &baseline)
	if ub := (*gate.UnknownBaselineError)(nil); errors.As(err, &ub) {
		return httpapi.Invalid("%s", ub.Error())
	}
	if err != nil {
		return err
	}
	var all []findings.Issue
	if err := h.store.Lists.EachScanIssue(ctx, companyID, sc.ID, func(i findings.Issue) error {
		all = append(all, i)
		return nil
	}); err != nil {
		return err
	}
	cmp, err := gate.CompareScan(ctx, gate.Source{Baselines: h.store.Baselines, Scans: h.store.Scans}, sc, branch, all)
	if err != nil {
		return err
	}
	// The comparison is computed over every issue of the scan: the page is
	// cut from it (see httpapi.Slice).
	out := storepage.Map(httpapi.Slice(pg, cmp.Counted), func(i findings.Issue) issueJSON { return renderIssue(i, i.LastSeenScanID) })
	if err := h.withTickets(ctx, companyID, out.Items); err != nil {
		return err
	}
	return httpapi.WriteList(w, pg, issueList, out, httpapi.Member{Name: "baseline", Value: cmp.Summary})
}

// baselineParam is the baseline query parameter, "" when absent or empty.
func baselineParam(r *http.Request) string { return strings.TrimSpace(r.URL.Query().Get("baseline")) }
