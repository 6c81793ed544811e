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
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/scanlife"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/scans"
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
// for the ingester, and returns how many it ended. A scan it cannot end
// now is left for the next run, and does not hold up the others: its
// branch busy with another upload passes quietly, any other failure is
// returned (joined) after the run.
func Run(ctx context.Context, st Store, now time.Time) (int, error) {
	stalled, err := st.Scans.StalledScans(ctx, now.Add(-StalledAfter), batch)
	if err != nil {
		return 0, err
	}
	ended := 0
	var errs []error
	for _, s := range stalled {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		changed, err := end(ctx, st, s, now)
		switch {
		case errors.Is(err, ddb.ErrUnavailable):
		case err != nil:
			errs = append(errs, fmt.Errorf("scan %s of company %d: %w", s.ScanID, s.CompanyID, err))
		case changed:
			ended++
		}
	}
	return ended, errors.Join(errs...)
}

// end ends one stalled scan, reporting whether it changed it.
func end(ctx context.Context, st Store, s scans.StalledScan, now time.Time) (bool, error) {
	sc, err := st.Scans.GetScan(ctx, s.CompanyID, s.ScanID)
	if errors.Is(err, ddb.ErrNotFound) || (err == nil && sc.Status != scans.ScanProcessing) {
		return false, st.Scans.ClearStalled(ctx, s)
	}
	if err != nil {
		return false, err
	}
	return scanlife.Fail(ctx, st.Failing, sc, Reason, []scans.ScanError{{
		ScanType: sc.Engine, Level: "error", Location: "report",
		Message: "processing did not finish within " + StalledAfter.String() + "; upload the report again with a new run_id",
	}}, now)
}
