package tenancy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Conflicts of a new user, both inside its company: another company's use
// of an email or a subject is no conflict and is never revealed.
var (
	ErrEmailTaken   = fmt.Errorf("%w: email in use in the company", ddb.ErrConflict)
	ErrSubjectTaken = fmt.Errorf("%w: token subject mapped to another user of the company", ddb.ErrConflict)
)

// ErrSCMLoginTaken refuses a host login another user of the company is
// linked to (see UserChange.SCMLogin).
var ErrSCMLoginTaken = fmt.Errorf("%w: host login linked to another user of the company", ddb.ErrConflict)

// ErrLastAdmin refuses a change that would leave a company without an
// active admin.
var ErrLastAdmin = errors.New("the company's last active admin")

// HashAPIKey is the only form in which an API key is stored.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// User list facets: every user is listed under FacetAll, its role and each
// of its permissions, as a copy of the user under
// USERBY#<facet>#<zero-padded id>, with a counter per facet; so a filtered
// page is one Query and its total one GetItem.
const (
	FacetAll    = "all"
	FacetAdmin  = "role:admin"
	FacetMember = "role:member"
	// activeAdmins counts active admins; a change that would take it to
	// zero fails its condition (the last-admin guard).
	activeAdmins = "active_admins"
)

// FacetPermission is the facet of users holding perm.
func FacetPermission(perm string) string { return "perm:" + perm }

func facets(u schema.User) []string {
	out := []string{FacetAll, FacetMember}
	if u.IsAdmin {
		out[1] = FacetAdmin
	}
	for _, p := range u.Permissions {
		out = append(out, FacetPermission(p))
	}
	return out
}

// CreateUser stores a new user, with the next id of the company's user
// sequence when u.ID is zero, with its email guard, token subject look-up,
// list copies and counters, in one transaction that also records the audit
// entry. ErrEmailTaken or ErrSubjectTaken when another user of the company
// has the email or the subject.
func (s *Tenancy) CreateUser(ctx context.Context, u schema.User) (schema.User, error) {
	next := u.ID == 0
	for attempt := 0; ; attempt++ {
		if next {
			id, err := s.NextUserID(ctx, u.CompanyID)
			if err != nil {
				return schema.User{}, err
			}
			u.ID = id
		}
		items, created, err := s.txCreateUser(ctx, u)
		if err != nil {
			return schema.User{}, err
		}
		err = s.t.Transact(ctx, items)
		switch {
		case next && ddb.ConditionFailedAt(err, 0) && attempt < ddb.MaxTxAttempts:
			continue // the id is an older user's (see ledger.NextCompanyID): take the next
		case ddb.ConditionFailedAt(err, 1):
			return schema.User{}, ErrEmailTaken
		case u.Subject != "" && (ddb.ConditionFailedAt(err, 2) || ddb.ConditionFailedAt(err, 3)):
			return schema.User{}, ErrSubjectTaken
		case err != nil:
			return schema.User{}, err
		}
		return created, nil
	}
}

// NextUserID is the company's next user id, above its highest one.
func (s *Tenancy) NextUserID(ctx context.Context, companyID int64) (int64, error) {
	return s.l.NextCompanyID(ctx, companyID, "user", schema.UserFacetPrefix(FacetAll))
}

func (s *Tenancy) txCreateUser(ctx context.Context, u schema.User) ([]types.TransactWriteItem, schema.User, error) {
	u.Key = schema.UserKey(u.CompanyID, u.ID)
	u.CreatedAt, u.Revision = s.t.Stamp(), 1
	u.UpdatedAt = u.CreatedAt
	slices.Sort(u.Permissions)
	var items []types.TransactWriteItem
	add := func(it types.TransactWriteItem, err error) error {
		items = append(items, it)
		return err
	}
	if err := add(s.t.TxPutNew(u)); err != nil {
		return nil, schema.User{}, err
	}
	if err := add(s.t.TxPutNew(schema.UserEmailRef{Key: schema.UserEmailKey(u.CompanyID, u.Email), UserID: u.ID})); err != nil {
		return nil, schema.User{}, err
	}
	if u.Subject != "" {
		ref := schema.CredentialRef{Key: schema.SubjectKey(u.Subject, u.CompanyID), CompanyID: u.CompanyID, UserID: u.ID, CreatedAt: u.CreatedAt}
		if err := add(s.t.TxPutNew(ref)); err != nil {
			return nil, schema.User{}, err
		}
		// A mapping from before subjects were per company, when it is this
		// company's, is taken too.
		notOurs := expression.AttributeNotExists(expression.Name(tabledef.PK)).Or(
			expression.Name("company_id").NotEqual(expression.Value(u.CompanyID)))
		expr, err := expression.NewBuilder().WithCondition(notOurs).Build()
		if err != nil {
			return nil, schema.User{}, err
		}
		items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName: aws.String(s.t.Name), Key: schema.LegacySubjectKey(u.Subject).AV(), ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		}})
	}
	for _, f := range facets(u) {
		c := u
		c.Key = schema.UserFacetKey(u.CompanyID, f, u.ID)
		if err := add(s.t.TxPut(c, nil)); err != nil {
			return nil, schema.User{}, err
		}
		if err := add(s.l.TxAdd(schema.UserCountKey(u.CompanyID, f), 1, nil)); err != nil {
			return nil, schema.User{}, err
		}
	}
	if u.Active && u.IsAdmin {
		if err := add(s.l.TxAdd(schema.UserCountKey(u.CompanyID, activeAdmins), 1, nil)); err != nil {
			return nil, schema.User{}, err
		}
	}
	audit, err := s.l.TxAudit(ctx, u.CompanyID, ledger.AuditEntry{
		Action: "user.create", TargetType: "user", TargetID: strconv.FormatInt(u.ID, 10),
		Changes: map[string]ledger.Change{
			"email": {After: u.Email}, "first_name": {After: u.FirstName}, "last_name": {After: u.LastName},
			"permissions": {After: permissionList(u.Permissions)}, "is_admin": {After: u.IsAdmin},
			"active": {After: u.Active}, "subject": {After: u.Subject},
		},
	})
	return append(items, audit...), u, err
}

func permissionList(p []string) []string {
	if p == nil {
		return []string{}
	}
	return p
}

// GetUser reads a user of a company.
func (s *Tenancy) GetUser(ctx context.Context, companyID, userID int64) (schema.User, error) {
	var u schema.User
	err := s.t.GetItem(ctx, schema.UserKey(companyID, userID), &u)
	return u, err
}

// UserByEmail finds a user of a company by email (ignoring case).
func (s *Tenancy) UserByEmail(ctx context.Context, companyID int64, email string) (schema.User, error) {
	var ref schema.UserEmailRef
	if err := s.t.GetItem(ctx, schema.UserEmailKey(companyID, email), &ref); err != nil {
		return schema.User{}, err
	}
	return s.GetUser(ctx, companyID, ref.UserID)
}

// ListUsers returns every user of a company.
func (s *Tenancy) AllUsers(ctx context.Context, companyID int64) ([]schema.User, error) {
	var out []schema.User
	err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), schema.UserSKPrefix), true, &out)
	return out, err
}

// ListUsers returns one page of a company's users under a facet (by id)
// with the facet's total.
func (s *Tenancy) ListUsers(ctx context.Context, companyID int64, facet string, q page.Request) (page.Page[schema.User], error) {
	l := page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(schema.UserFacetPrefix(facet)), Forward: true}
	p, err := page.ReadPage[schema.User](ctx, s.t, l, q)
	if err != nil {
		return page.Page[schema.User]{}, err
	}
	n, err := s.l.CounterValue(ctx, schema.UserCountKey(companyID, facet))
	return p.Counted(n), err
}

// UserChange lists what an update sets; nil keeps a value.
type UserChange struct {
	Permissions *[]string
	IsAdmin     *bool
	Active      *bool
	// SCMLogin links the user's login on the company's source-code host
	// (lower case; "" unlinks): a pull-request command by that login acts
	// as the user. It is unique in the company: its look-up item
	// (schema.SCMLoginKey) is written in the update's transaction,
	// conditional on no other user's holding it (ErrSCMLoginTaken).
	SCMLogin *string
}

// UpdateUser applies ch to a user in one transaction with its list copies,
// counters and audit entry, conditional on the revision it read (a
// concurrent change makes it read again). It returns the user before and
// after. ErrLastAdmin when the change would leave the company without an
// active admin, ErrSCMLoginTaken when another user of the company holds
// the login; a change that changes nothing writes nothing.
func (s *Tenancy) UpdateUser(ctx context.Context, companyID, userID int64, ch UserChange) (before, after schema.User, err error) {
	if ch.SCMLogin != nil && *ch.SCMLogin != strings.ToLower(*ch.SCMLogin) {
		return schema.User{}, schema.User{}, fmt.Errorf("scm login %q is not lower case: %w", *ch.SCMLogin, ddb.ErrInvalid)
	}
	for attempt := 0; attempt < ddb.MaxTxAttempts; attempt++ {
		if err := ddb.Backoff(ctx, attempt); err != nil {
			return schema.User{}, schema.User{}, err
		}
		before = schema.User{} // unmarshalling leaves absent members as they were
		if err := s.t.GetItemConsistent(ctx, schema.UserKey(companyID, userID), &before); err != nil {
			return schema.User{}, schema.User{}, err
		}
		after = before
		if ch.Permissions != nil {
			after.Permissions = slices.Sorted(slices.Values(*ch.Permissions))
			after.Permissions = slices.Compact(after.Permissions)
		}
		if ch.IsAdmin != nil {
			after.IsAdmin = *ch.IsAdmin
		}
		if ch.Active != nil {
			after.Active = *ch.Active
		}
		if ch.SCMLogin != nil {
			after.SCMLogin = *ch.SCMLogin
		}
		changes := userChanges(before, after)
		if len(changes) == 0 {
			return before, before, nil
		}
		after.Revision = before.Revision + 1
		after.UpdatedAt = s.t.Stamp()
		items, g, err := s.txUpdateUser(ctx, before, after, changes)
		if err != nil {
			return schema.User{}, schema.User{}, err
		}
		err = s.t.Transact(ctx, items)
		switch {
		case err == nil:
			return before, after, nil
		case g.lastAdmin >= 0 && ddb.ConditionFailedAt(err, g.lastAdmin):
			return schema.User{}, schema.User{}, ErrLastAdmin
		case g.login >= 0 && ddb.ConditionFailedAt(err, g.login):
			return schema.User{}, schema.User{}, ErrSCMLoginTaken
		case ddb.ConditionFailedAt(err, 0):
			continue // changed meanwhile: read it again
		default:
			return schema.User{}, schema.User{}, err
		}
	}
	return schema.User{}, schema.User{}, fmt.Errorf("update user %d: %w", userID, ddb.ErrUnavailable)
}

func userChanges(before, after schema.User) map[string]ledger.Change {
	out := map[string]ledger.Change{}
	if !slices.Equal(before.Permissions, after.Permissions) {
		out["permissions"] = ledger.Change{Before: permissionList(before.Permissions), After: permissionList(after.Permissions)}
	}
	if before.IsAdmin != after.IsAdmin {
		out["is_admin"] = ledger.Change{Before: before.IsAdmin, After: after.IsAdmin}
	}
	if before.Active != after.Active {
		out["active"] = ledger.Change{Before: before.Active, After: after.Active}
	}
	if before.SCMLogin != after.SCMLogin {
		out["scm_login"] = ledger.Change{Before: orNil(before.SCMLogin), After: orNil(after.SCMLogin)}
	}
	return out
}

// orNil is an unset text member as the audit log shows it (null).
func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// guards are the indexes of an update's conditional items whose failure
// is an answer, not a concurrent change (-1 when the update has none).
type guards struct{ lastAdmin, login int }

// txUpdateUser returns the items of an update and the indexes of its
// last-admin and login guards among them.
func (s *Tenancy) txUpdateUser(ctx context.Context, before, after schema.User, changes map[string]ledger.Change) ([]types.TransactWriteItem, guards, error) {
	g := guards{lastAdmin: -1, login: -1}
	cond := expression.AttributeNotExists(expression.Name("revision"))
	if before.Revision != 0 {
		cond = expression.Name("revision").Equal(expression.Value(before.Revision))
	}
	user, err := s.t.TxPut(after, &cond)
	if err != nil {
		return nil, g, err
	}
	items := []types.TransactWriteItem{user}
	cid := after.CompanyID
	old, cur := facets(before), facets(after)
	for _, f := range old {
		if !slices.Contains(cur, f) {
			k := schema.UserFacetKey(cid, f, after.ID)
			items = append(items, s.t.TxDeleteKey(k))
			it, err := s.l.TxAdd(schema.UserCountKey(cid, f), -1, nil)
			if err != nil {
				return nil, g, err
			}
			items = append(items, it)
		}
	}
	for _, f := range cur {
		c := after
		c.Key = schema.UserFacetKey(cid, f, after.ID)
		it, err := s.t.TxPut(c, nil)
		if err != nil {
			return nil, g, err
		}
		items = append(items, it)
		if !slices.Contains(old, f) {
			it, err := s.l.TxAdd(schema.UserCountKey(cid, f), 1, nil)
			if err != nil {
				return nil, g, err
			}
			items = append(items, it)
		}
	}
	login, err := s.txSCMLogin(before, after)
	if err != nil {
		return nil, g, err
	}
	if after.SCMLogin != before.SCMLogin && after.SCMLogin != "" {
		g.login = len(items)
	}
	items = append(items, login...)
	was, is := before.Active && before.IsAdmin, after.Active && after.IsAdmin
	if was != is {
		delta, cond := int64(1), (*expression.ConditionBuilder)(nil)
		if was {
			c := expression.Name("count").GreaterThan(expression.Value(1))
			delta, cond, g.lastAdmin = -1, &c, len(items)
		}
		it, err := s.l.TxAdd(schema.UserCountKey(cid, activeAdmins), delta, cond)
		if err != nil {
			return nil, g, err
		}
		items = append(items, it)
	}
	audit, err := s.l.TxAudit(ctx, cid, ledger.AuditEntry{
		Action: "user.update", TargetType: "user", TargetID: strconv.FormatInt(after.ID, 10), Changes: changes,
	})
	return append(items, audit...), g, err
}

// txSCMLogin is the look-up items of a login change: the new login's,
// conditional on no other user's holding it (first), and the removal of
// the old one's; none when the login stays.
func (s *Tenancy) txSCMLogin(before, after schema.User) ([]types.TransactWriteItem, error) {
	if before.SCMLogin == after.SCMLogin {
		return nil, nil
	}
	var items []types.TransactWriteItem
	if after.SCMLogin != "" {
		free := expression.AttributeNotExists(expression.Name(tabledef.PK)).Or(
			expression.Name("user_id").Equal(expression.Value(after.ID)))
		ref := schema.SCMLoginRef{Key: schema.SCMLoginKey(after.CompanyID, after.SCMLogin), UserID: after.ID}
		it, err := s.t.TxPut(ref, &free)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	if before.SCMLogin != "" {
		items = append(items, s.t.TxDeleteKey(schema.SCMLoginKey(before.CompanyID, before.SCMLogin)))
	}
	return items, nil
}

// UsersByID reads the company's users with these ids (by key); ids that
// are not the company's users are absent from the map.
func (s *Tenancy) UsersByID(ctx context.Context, companyID int64, ids []int64) (map[int64]schema.User, error) {
	return ddb.ByID(ctx, s.t, ids, func(id int64) ddb.Key { return schema.UserKey(companyID, id) }, func(u schema.User) int64 { return u.ID })
}
