package teams

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
)

// Store is what the teams handlers read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	CreateTeam(ctx context.Context, t store.Team) (store.Team, error)
	GetTeam(ctx context.Context, companyID, teamID int64) (store.Team, error)
	ProjectsByID(ctx context.Context, companyID int64, ids []int64) (map[int64]store.Project, error)
	TeamByName(ctx context.Context, companyID int64, name string) (store.Team, error)
	TeamCount(ctx context.Context, companyID int64) (int, error)
	TeamsPage(ctx context.Context, companyID int64, q store.PageQuery) ([]store.Team, store.PageResult, error)
	UsersByID(ctx context.Context, companyID int64, ids []int64) (map[int64]store.User, error)
}
