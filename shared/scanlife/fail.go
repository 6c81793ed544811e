package scanlife

import (
	"context"
	"errors"
	"time"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Failing is what failing a scan reads and writes: per area of the store,
// the calls it makes and no others; FailingOf composes it from the
// store's areas.
type Failing struct {
	Catalog interface {
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
	}
	Findings interface {
		SettleScanJournal(ctx context.Context, companyID int64, sc scans.Scan) error
	}
	Scans interface {
		SettleCounted(ctx context.Context, companyID int64, scanID string) error
		FailScan(ctx context.Context, sc scans.Scan, reason string, problems []scans.ScanError, ev *schema.Event) (bool, error)
	}
}

// FailingOf is the areas of st that Failing touches: its composition.
func FailingOf(st *store.Store) Failing {
	return Failing{Catalog: st.Catalog, Findings: st.Findings, Scans: st.Scans}
}

// Fail ends sc, a scan still processing, as incomplete for reason (its
// failed_reason) with its problems (scan_errors), the one way a scan
// fails, whoever gives up on it (the ingester for a report it cannot
// ingest, the stalled sweep): first every journal its writers left owing
// the counters is settled (that of its quality and SCA findings, then,
// under the branch's lease, that of its issues), so that the counters
// equal what the scan wrote; then the scan is ended and its scan_failed
// event (at at) recorded in one transaction. It reports whether it
// changed the scan: a scan no longer processing is left as it is. A
// branch busy with another upload for longer than a lease wait answers
// ErrUnavailable, to be tried again.
func Fail(ctx context.Context, st Failing, sc scans.Scan, reason string, problems []scans.ScanError, at time.Time) (bool, error) {
	proj, err := st.Catalog.GetProject(ctx, sc.CompanyID, sc.ProjectID)
	if err != nil && !errors.Is(err, ddb.ErrNotFound) { // a project deleted meanwhile has no name to give
		return false, err
	}
	ev, err := scans.ScanFailedEvent(sc, proj.Name, reason, at)
	if err != nil {
		return false, err
	}
	if err := st.Scans.SettleCounted(ctx, sc.CompanyID, sc.ID); err != nil {
		return false, err
	}
	if err := st.Findings.SettleScanJournal(ctx, sc.CompanyID, sc); err != nil {
		return false, err
	}
	return st.Scans.FailScan(ctx, sc, reason, problems, ev)
}
