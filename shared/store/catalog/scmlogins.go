package catalog

import (
	"context"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// A user's login on the company's source-code host links the person who
// writes a command in a pull request to the user it acts as. The login is
// a member of the user's change (tenancy.UserChange.SCMLogin): unique in
// the company, its look-up item (schema.SCMLoginKey) is written in the
// user's one transaction, with its one audit entry.

// SetUserSCMLogin links login (lower case; "" unlinks) to a user of the
// company: tenancy's UpdateUser with only the login. It returns the user
// before and after; ErrNotFound for no such user, ErrSCMLoginTaken when
// another user holds the login. Setting the login the user has writes
// nothing.
func (s *Catalog) SetUserSCMLogin(ctx context.Context, companyID, userID int64, login string) (before, after schema.User, err error) {
	return tenancy.New(s.t, s.l).UpdateUser(ctx, companyID, userID, tenancy.UserChange{SCMLogin: &login})
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
