package catalog

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/ledger"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/tabledef"
)

// A user's login on the company's source-code host links the person who
// writes a command in a pull request to the user it acts as. The login is
// unique in the company: its look-up item (schema.SCMLoginKey) is written
// in the user's transaction, conditional on no other user's holding it.

// ErrSCMLoginTaken refuses a login another user of the company has.
var ErrSCMLoginTaken = fmt.Errorf("%w: host login linked to another user of the company", ddb.ErrConflict)

// SetUserSCMLogin links login (lower case; "" unlinks) to a user of the
// company, with its look-up, list copies and audit entry in one
// transaction conditional on the revision read (read again when a
// concurrent change moved it). It returns the user before and after;
// ErrNotFound for no such user, ErrSCMLoginTaken when another user holds
// the login. Setting the login the user has writes nothing.
func (s *Catalog) SetUserSCMLogin(ctx context.Context, companyID, userID int64, login string) (before, after schema.User, err error) {
	if login != strings.ToLower(login) {
		return before, after, fmt.Errorf("scm login %q is not lower case: %w", login, ddb.ErrInvalid)
	}
	for attempt := 0; attempt < ddb.MaxTxAttempts; attempt++ {
		if err := ddb.Backoff(ctx, attempt); err != nil {
			return before, after, err
		}
		before = schema.User{} // unmarshalling leaves absent members as they were
		if err := s.t.GetItemConsistent(ctx, schema.UserKey(companyID, userID), &before); err != nil {
			return schema.User{}, schema.User{}, err
		}
		if before.SCMLogin == login {
			return before, before, nil
		}
		after = before
		after.SCMLogin, after.Revision, after.UpdatedAt = login, before.Revision+1, s.t.Stamp()
		items, guard, err := s.txSCMLogin(ctx, before, after)
		if err != nil {
			return schema.User{}, schema.User{}, err
		}
		err = s.t.Transact(ctx, items)
		switch {
		case err == nil:
			return before, after, nil
		case guard >= 0 && ddb.ConditionFailedAt(err, guard):
			return schema.User{}, schema.User{}, ErrSCMLoginTaken
		case ddb.ConditionFailedAt(err, 0):
			continue // changed meanwhile: read it again
		default:
			return schema.User{}, schema.User{}, err
		}
	}
	return schema.User{}, schema.User{}, fmt.Errorf("set scm login of user %d: %w", userID, ddb.ErrUnavailable)
}

// txSCMLogin is the transaction of a login change and the index of the new
// login's guard among its items (-1 when the login is removed).
func (s *Catalog) txSCMLogin(ctx context.Context, before, after schema.User) ([]types.TransactWriteItem, int, error) {
	cond := expression.AttributeNotExists(expression.Name("revision"))
	if before.Revision != 0 {
		cond = expression.Name("revision").Equal(expression.Value(before.Revision))
	}
	user, err := s.t.TxPut(after, &cond)
	if err != nil {
		return nil, -1, err
	}
	items := []types.TransactWriteItem{user}
	// The list copies show the user as the user item does (GET /users
	// reads them).
	for _, f := range userFacets(after) {
		c := after
		c.Key = schema.UserFacetKey(after.CompanyID, f, after.ID)
		it, err := s.t.TxPut(c, nil)
		if err != nil {
			return nil, -1, err
		}
		items = append(items, it)
	}
	guard := -1
	if after.SCMLogin != "" {
		free := expression.AttributeNotExists(expression.Name(tabledef.PK)).Or(
			expression.Name("user_id").Equal(expression.Value(after.ID)))
		ref := schema.SCMLoginRef{Key: schema.SCMLoginKey(after.CompanyID, after.SCMLogin), UserID: after.ID}
		it, err := s.t.TxPut(ref, &free)
		if err != nil {
			return nil, -1, err
		}
		guard = len(items)
		items = append(items, it)
	}
	if before.SCMLogin != "" {
		items = append(items, s.t.TxDeleteKey(schema.SCMLoginKey(before.CompanyID, before.SCMLogin)))
	}
	audit, err := s.l.TxAudit(ctx, after.CompanyID, ledger.AuditEntry{
		Action: "user.update", TargetType: "user", TargetID: strconv.FormatInt(after.ID, 10),
		Changes: map[string]ledger.Change{"scm_login": {Before: orNil(before.SCMLogin), After: orNil(after.SCMLogin)}},
	})
	return append(items, audit...), guard, err
}

// userFacets are the user lists a user is copied into (tenancy's facets:
// every user, the role, each permission).
func userFacets(u schema.User) []string {
	out := []string{tenancy.FacetAll, tenancy.FacetMember}
	if u.IsAdmin {
		out[1] = tenancy.FacetAdmin
	}
	for _, p := range u.Permissions {
		out = append(out, tenancy.FacetPermission(p))
	}
	return out
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// UserBySCMLogin finds the company's user linked to a host login (lower
// case); ErrNotFound when none is.
func (s *Catalog) UserBySCMLogin(ctx context.Context, companyID int64, login string) (schema.User, error) {
	var ref schema.SCMLoginRef
	if err := s.t.GetItem(ctx, schema.SCMLoginKey(companyID, login), &ref); err != nil {
		return schema.User{}, err
	}
	var u schema.User
	if err := s.t.GetItem(ctx, schema.UserKey(companyID, ref.UserID), &u); err != nil {
		return schema.User{}, err
	}
	if u.SCMLogin != login {
		return schema.User{}, ddb.ErrNotFound // written in one transaction: only a torn read sees this
	}
	return u, nil
}
