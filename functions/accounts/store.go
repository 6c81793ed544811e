package accounts

import (
	"context"

	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// Store is what the accounts handlers (users, API keys, the audit log) read and write: per area of the store, the calls
// they make and no others; StoreOf composes it from the store's areas.
type Store interface {
	CreateAPIKey(ctx context.Context, k schema.APIKey, key string) (schema.APIKey, error)
	CreateUser(ctx context.Context, u schema.User) (schema.User, error)
	GetAPIKey(ctx context.Context, companyID, keyID int64) (schema.APIKey, error)
	GetUser(ctx context.Context, companyID, userID int64) (schema.User, error)
	ListAPIKeys(ctx context.Context, companyID, userID int64, q page.Request) (page.Page[schema.APIKey], error)
	ListAudit(ctx context.Context, companyID int64, f tenancy.AuditFilter, q page.Request) (page.Page[tenancy.AuditRecord], error)
	ListUsers(ctx context.Context, companyID int64, facet string, q page.Request) (page.Page[schema.User], error)
	RevokeAPIKey(ctx context.Context, companyID, keyID int64) (schema.APIKey, error)
	UpdateUser(ctx context.Context, companyID, userID int64, ch tenancy.UserChange) (before, after schema.User, err error)
}
