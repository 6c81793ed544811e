package components

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	storecomponents "github.com/acme/codescan-api/shared/store/components"
)

// Store is what the component inventory's route reads: the store methods
// it calls, and no others. The Lambda main passes the store itself.
type Store interface {
	HoldersPage(ctx context.Context, companyID int64, q storecomponents.HolderQuery, r store.PageQuery) ([]storecomponents.Holder, store.PageResult, error)
	PackageVersions(ctx context.Context, companyID int64, pkg string) ([]storecomponents.VersionCount, error)
	PackageProjects(ctx context.Context, companyID int64, pkg string) (int, error)
}
