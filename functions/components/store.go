package components

import (
	"context"

	storecomponents "github.com/acme/codescan-api/shared/store/components"
	"github.com/acme/codescan-api/shared/store/page"
)

// Store is what the component inventory's route reads: the store methods
// it calls, and no others. StoreOf composes it from the store's areas.
type Store interface {
	ListHolders(ctx context.Context, companyID int64, q storecomponents.HolderQuery, r page.Request) (page.Page[storecomponents.Holder], error)
	PackageVersions(ctx context.Context, companyID int64, pkg string) ([]storecomponents.VersionCount, error)
	PackageProjects(ctx context.Context, companyID int64, pkg string) (int, error)
}
