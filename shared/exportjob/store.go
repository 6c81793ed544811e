package exportjob

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/exports"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what the worker reads and writes: the store methods it calls,
// and no others.
type Store struct {
	Exports interface {
		ExportProgress(ctx context.Context, companyID int64, id string, attempt int, read int64, expected int64) error
		FailExport(ctx context.Context, companyID int64, id string, reason string) error
		FinishExport(ctx context.Context, companyID int64, id string, attempt int, r exports.Result) error
		StartExport(ctx context.Context, companyID int64, id string, maxAttempts int) (schema.ExportItem, bool, error)
	}
	Lists interface {
		ListIssues(ctx context.Context, companyID int64, f issuelists.IssueFilter, q page.Request) (page.Page[findings.Issue], error)
	}
	SCA interface {
		ListSCAIssues(ctx context.Context, companyID int64, projectID int64, q page.Request) (page.Page[sca.Issue], error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Exports: st.Exports, Lists: st.Lists, SCA: st.SCA}
}
