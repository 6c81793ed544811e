package demo

import (
	"context"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
)

func init() { register(40, seedAccounts) }

// seedAccounts gives the member two named API keys, made and one revoked by
// the admin (through a bearer token), so the key list and the audit log
// have something to show. The named keys' values are random and written
// nowhere: only their ids are in the document.
func seedAccounts(ctx context.Context, st *store.Store, c *Company) error {
	admin, member := c.UserByRole("admin"), c.UserByRole("member")
	ctx = ledger.WithAuditActor(ctx, ledger.AuditActor{UserID: admin.ID, Via: ledger.ViaBearer})
	var ids []int64
	for _, name := range []string{"CI pipeline", "Old laptop"} {
		k, err := st.Tenancy.CreateAPIKey(ctx, schema.APIKey{CompanyID: c.ID, UserID: member.ID, Name: name}, auth.NewAPIKey())
		if err != nil {
			return err
		}
		ids = append(ids, k.ID)
	}
	if _, err := st.Tenancy.RevokeAPIKey(ctx, c.ID, ids[1]); err != nil {
		return err
	}
	c.Resources["api_key_ids"] = ids[:1]
	c.Resources["revoked_api_key_id"] = ids[1]
	c.Resources["member_user_id"] = member.ID
	return nil
}
