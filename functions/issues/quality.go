package issues

import (
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store"
)

var errScanNotFound = httpapi.Errorf(http.StatusNotFound, "Scan not found")

// quality answers GET /scan/{scan_id}/issues/quality: the scan's code
// quality findings, newest first (ties by id), optionally only those whose
// classification name contains `classification` (case-insensitive).
func (h handlers) quality(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	companyID := auth.FromContext(ctx).CompanyID
	if err := uuid.Validate(r.PathValue("scan_id")); err != nil || len(r.PathValue("scan_id")) != 36 {
		return httpapi.Errorf(http.StatusBadRequest, "scan_id must be a uuid")
	}
	pg, err := httpapi.ParsePaging(r, defaultPageSize, maxQualitySize)
	if err != nil {
		return err
	}
	scan, err := h.store.GetScan(ctx, companyID, r.PathValue("scan_id"))
	if errors.Is(err, store.ErrNotFound) {
		return errScanNotFound
	}
	if err != nil {
		return err
	}
	all, err := h.store.ListQualityIssues(ctx, companyID, scan.ID, r.URL.Query().Get("classification"))
	if err != nil {
		return err
	}
	from := min(pg.Offset(), len(all))
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"status": "ok", "page": pg.Page, "total_pages": pg.TotalPages(len(all)),
		"total_issues": len(all), "issues": all[from:min(from+pg.PageSize, len(all))],
	})
}
