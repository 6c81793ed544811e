package issues

import (
	"errors"
	"net/http"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
)

// clientPageSize is the page size of the routes the real client calls
// without one.
const clientPageSize = 30

// scanIssues answers GET /scan/{scan_id}/issues: the SAST issues the scan
// reported, in issue id order, with their current status, by number or by
// cursor. While the scan is processing the list grows; total_issues is
// final once it is complete. With baseline, what the scan adds to that
// branch (see scanIssuesAgainst).
func (h handlers) scanIssues(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	companyID := auth.FromContext(ctx).CompanyID
	sc, pg, err := h.scanPage(r)
	if err != nil {
		return err
	}
	if b := baselineParam(r); b != "" {
		return h.scanIssuesAgainst(w, r, sc, pg, b)
	}
	page, err := h.store.Lists.ListScanIssues(ctx, companyID, sc, pg.Query())
	if err != nil {
		return err
	}
	out := storepage.Map(page, func(i findings.Issue) issueJSON { return renderIssue(i, i.LastSeenScanID) })
	if err := h.withTickets(ctx, companyID, out.Items); err != nil {
		return err
	}
	return httpapi.WriteList(w, pg, issueList, out)
}

// scanPage reads what the per-scan lists share: the paging parameters (the
// client's default size) and the caller's scan named in the path.
func (h handlers) scanPage(r *http.Request) (scans.Scan, httpapi.Paging, error) {
	pg, err := httpapi.ParsePaging(r, clientPageSize, maxPageSize)
	if err != nil {
		return scans.Scan{}, pg, err
	}
	sc, err := h.store.Scans.GetScan(r.Context(), auth.FromContext(r.Context()).CompanyID, r.PathValue("scan_id"))
	if errors.Is(err, ddb.ErrNotFound) {
		return scans.Scan{}, pg, errScanNotFound
	}
	return sc, pg, err
}
