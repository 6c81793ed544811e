package ingest

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/quality"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
)

// Store is what the scan write of a parsed report read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Findings interface {
		ApplyScan(ctx context.Context, companyID int64, sc scans.Scan, found []findings.Issue) (findings.ApplyResult, error)
	}
	Quality interface {
		PutQualityIssues(ctx context.Context, companyID int64, issues []quality.Issue) error
	}
	SCA interface {
		PutScanSCAIssues(ctx context.Context, companyID int64, sc scans.Scan, found []sca.Issue) error
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Findings: st.Findings, Quality: st.Quality, SCA: st.SCA}
}
