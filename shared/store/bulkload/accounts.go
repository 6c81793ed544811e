package bulkload

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// PutCompany creates or replaces company c, with the id it carries, and its
// name guard, writing no audit entry: seeding, benchmarks and tests pick
// their ids. The API and the operator create companies with
// store.CreateCompany. CreatedAt is now when c has none.
func PutCompany(ctx context.Context, st *store.Store, c schema.Company) error {
	t := &ddb.Table{DB: st.Client(), Name: st.TableName()}
	if err := t.PutItem(ctx, schema.CompanyNameRef{Key: schema.CompanyNameKey(c.Name), CompanyID: c.ID}, nil); err != nil {
		return err
	}
	return t.PutItem(ctx, c.Item(t.Stamp()), nil)
}

// PutUser creates user u (store.CreateUser, keeping only the error).
func PutUser(ctx context.Context, st *store.Store, u schema.User) error {
	_, err := st.Tenancy.CreateUser(ctx, u)
	return err
}

// PutAPIKey stores key as a key named "default" of the user, without an
// expiry (store.CreateAPIKey, keeping only the error).
func PutAPIKey(ctx context.Context, st *store.Store, companyID, userID int64, key string) error {
	_, err := st.Tenancy.CreateAPIKey(ctx, schema.APIKey{CompanyID: companyID, UserID: userID, Name: "default"}, key)
	return err
}
