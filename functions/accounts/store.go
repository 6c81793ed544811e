package accounts

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
)

// Store is what the accounts handlers (users, API keys, the audit log) read and write: the store methods they
// call, and no others. The Lambda main passes the store itself.
type Store interface {
	CreateAPIKey(ctx context.Context, k store.APIKey, key string) (store.APIKey, error)
	CreateUser(ctx context.Context, u store.User) (store.User, error)
	GetAPIKey(ctx context.Context, companyID, keyID int64) (store.APIKey, error)
	GetUser(ctx context.Context, companyID, userID int64) (store.User, error)
	ListAPIKeys(ctx context.Context, companyID, userID int64, q store.PageQuery) ([]store.APIKey, store.PageResult, int64, error)
	ListAudit(ctx context.Context, companyID int64, f store.AuditFilter, q store.PageQuery) ([]store.AuditRecord, store.PageResult, error)
	ListUsersPage(ctx context.Context, companyID int64, facet string, q store.PageQuery) ([]store.User, store.PageResult, int64, error)
	RevokeAPIKey(ctx context.Context, companyID, keyID int64) (store.APIKey, error)
	UpdateUser(ctx context.Context, companyID, userID int64, ch store.UserChange) (before, after store.User, err error)
}
