package bulkload

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/scans"
)

// CIData reads the CI metadata stored for a scan of the company (no route
// returns it).
func CIData(ctx context.Context, st *store.Store, companyID int64, scanID string) (scans.CIData, error) {
	var d scans.CIData
	err := table(st).GetItem(ctx, scans.CIDataKey(companyID, scanID), &d)
	return d, err
}

// PendingUploadBytes is what the company's upload quota counter holds.
func PendingUploadBytes(ctx context.Context, st *store.Store, companyID int64) (int64, error) {
	var q scans.UploadQuota
	err := table(st).GetItemConsistent(ctx, scans.UploadQuotaKey(companyID), &q)
	return q.Pending, err
}
