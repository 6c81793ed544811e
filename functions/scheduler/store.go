package scheduler

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/exploitfeed"
	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/sweep"
)

// Store is what the scheduler jobs read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	sweep.Store // the stalled job
	KEVStore    // the exploits job's blast radius (kevaffected.go)
	BackfillDueIndex(ctx context.Context, until time.Time) (done bool, written int, err error)
	CompanyIDs(ctx context.Context) ([]int64, error)
	CountOpenDetected(ctx context.Context, companyID int64, urgency string, after, upTo time.Time) (int64, error)
	Import(ctx context.Context, cat exploitfeed.Catalog, sc exploitfeed.Scores) (exploits.Result, error)
	ExpireAcceptances(ctx context.Context, companyID int64) (int, error)
	EachPendingDue(ctx context.Context, companyID int64, urgency string, by time.Time, fn func(store.Issue) error) error
	MarkBreached(ctx context.Context, i store.Issue) error
	OpenByUrgency(ctx context.Context, companyID int64) (map[string]int64, error)
	RecordEventOnce(ctx context.Context, e store.Event) (bool, error)
	SLASettings(ctx context.Context, companyID int64) (sla.Settings, bool, error)
}
