// Package sweep ends the uploaded scans the ingester gave up on. When the
// ingester's retries of a new scan are exhausted (its stream record goes to
// the failure queue), the scan would stay processing and the client would
// poll until its own timeout; the scheduler's "stalled" job ends such scans
// incomplete, with a failed_reason the client prints and the scan_failed
// notification.
package sweep

import (
	"context"
	"errors"
	"time"

	"github.com/acme/codescan-api/shared/store"
)

// StalledAfter is how long a scan may wait for the ingester: longer than
// its worst case (6 attempts of at most 15 minutes each, see
// deployspec.Workers and the event source mapping's retries), so a scan a
// retry could still complete is never ended.
const StalledAfter = 2 * time.Hour

// batch bounds the scans one run ends; the job runs every few minutes.
const batch = 100

// Reason is the failed_reason of a scan ended by the sweep.
const Reason = "The upload could not be processed"

// Run ends the scans created before now minus StalledAfter that still wait
// for the ingester, and returns how many it ended.
func Run(ctx context.Context, st Store, now time.Time) (int, error) {
	stalled, err := st.StalledScans(ctx, now.Add(-StalledAfter), batch)
	if err != nil {
		return 0, err
	}
	ended := 0
	for _, s := range stalled {
		sc, err := st.GetScan(ctx, s.CompanyID, s.ScanID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && sc.Status != store.ScanProcessing) {
			if err := st.ClearStalled(ctx, s); err != nil {
				return ended, err
			}
			continue
		}
		if err != nil {
			return ended, err
		}
		proj, err := st.GetProject(ctx, sc.CompanyID, sc.ProjectID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return ended, err
		}
		ev, err := store.ScanFailedEvent(sc, proj.Name, Reason, now)
		if err != nil {
			return ended, err
		}
		changed, err := st.FailScan(ctx, sc.CompanyID, sc.ID, Reason, []store.ScanError{{
			ScanType: sc.Engine, Level: "error", Location: "report",
			Message: "processing did not finish within " + StalledAfter.String() + "; upload the report again with a new run_id",
		}}, ev)
		if errors.Is(err, store.ErrUnavailable) { // its branch is busy with another upload: the next run tries again
			continue
		}
		if err != nil {
			return ended, err
		}
		if changed {
			ended++
		}
	}
	return ended, nil
}
