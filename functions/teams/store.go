package teams

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Store is what the teams handlers read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store struct {
	Catalog interface {
		CreateTeam(ctx context.Context, t schema.Team) (schema.Team, error)
		GetTeam(ctx context.Context, companyID int64, teamID int64) (schema.Team, error)
		ProjectsByID(ctx context.Context, companyID int64, ids []int64) (map[int64]schema.Project, error)
		TeamByName(ctx context.Context, companyID int64, name string) (schema.Team, error)
		ListTeams(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.Team], error)
	}
	Tenancy interface {
		UsersByID(ctx context.Context, companyID int64, ids []int64) (map[int64]schema.User, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store {
	return Store{Catalog: st.Catalog, Tenancy: st.Tenancy}
}
