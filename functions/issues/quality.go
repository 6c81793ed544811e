package issues

import (
	"errors"
	"net/http"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

var errScanNotFound = httpapi.NotFound("Scan not found")

// quality answers GET /scan/{scan_id}/issues/quality: the scan's code
// quality findings, newest first (ties by id), optionally only those whose
// classification name contains `classification` (case-insensitive, matched
// against the scan's directory of classifications).
func (h handlers) quality(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	companyID := auth.FromContext(ctx).CompanyID
	scanID, ok := schema.CanonicalUUID(r.PathValue("scan_id"))
	if !ok {
		return httpapi.Invalid("scan_id must be a UUID")
	}
	pg, err := httpapi.ParsePaging(r, defaultPageSize, maxQualitySize)
	if err != nil {
		return err
	}
	scan, err := h.store.Scans.GetScan(ctx, companyID, scanID)
	if errors.Is(err, ddb.ErrNotFound) {
		return errScanNotFound
	}
	if err != nil {
		return err
	}
	page, err := h.store.Quality.ListScanQualityIssues(ctx, companyID, scan.ID, r.URL.Query().Get("classification"), pg.Query())
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, pg, issueList, page)
}
