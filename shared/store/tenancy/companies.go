package tenancy

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

func (s *Tenancy) companyItem(c schema.Company) schema.Company { return c.Item(s.t.Stamp()) }

// GetCompany reads a company.
func (s *Tenancy) GetCompany(ctx context.Context, id int64) (schema.Company, error) {
	var c schema.Company
	err := s.t.GetItem(ctx, schema.CompanyKey(id), &c)
	return c, err
}

// CompanyByName finds a company by name (ignoring case and surrounding
// space).
func (s *Tenancy) CompanyByName(ctx context.Context, name string) (schema.Company, error) {
	var ref schema.CompanyNameRef
	if err := s.t.GetItemConsistent(ctx, schema.CompanyNameKey(name), &ref); err != nil {
		return schema.Company{}, err
	}
	var c schema.Company
	err := s.t.GetItemConsistent(ctx, schema.CompanyKey(ref.CompanyID), &c)
	return c, err
}

// NewCompany is what creating a tenant needs: its name, its first admin
// and that admin's first API key.
type NewCompany struct {
	Name   string
	Admin  schema.User // email and names; the rest is set here
	APIKey string      // the admin's first key (only its hash is stored)
}

// CreateCompany creates a company, its first (active, admin) user and that
// user's first API key in one transaction with their audit entries. When a
// company of that name exists it returns it with created false and writes
// nothing.
func (s *Tenancy) CreateCompany(ctx context.Context, in NewCompany) (c schema.Company, admin schema.User, created bool, err error) {
	existing, err := s.CompanyByName(ctx, in.Name)
	if err == nil {
		return existing, schema.User{}, false, nil
	}
	if !errors.Is(err, ddb.ErrNotFound) {
		return schema.Company{}, schema.User{}, false, err
	}
	id, err := s.l.NextID(ctx, "company")
	if err != nil {
		return schema.Company{}, schema.User{}, false, err
	}
	uid, err := s.NextUserID(ctx, id)
	if err != nil {
		return schema.Company{}, schema.User{}, false, err
	}
	keyID, err := s.nextAPIKeyID(ctx, id)
	if err != nil {
		return schema.Company{}, schema.User{}, false, err
	}
	c = s.companyItem(schema.Company{ID: id, Name: strings.TrimSpace(in.Name)})
	guard, err := s.t.TxPutNew(schema.CompanyNameRef{Key: schema.CompanyNameKey(c.Name), CompanyID: id})
	if err != nil {
		return schema.Company{}, schema.User{}, false, err
	}
	item, err := s.t.TxPutNew(c)
	if err != nil {
		return schema.Company{}, schema.User{}, false, err
	}
	items := []types.TransactWriteItem{guard, item}
	audit, err := s.l.TxAudit(ctx, id, ledger.AuditEntry{
		Action: "company.create", TargetType: "company", TargetID: strconv.FormatInt(id, 10),
		Changes: map[string]ledger.Change{"name": {After: c.Name}},
	})
	if err != nil {
		return schema.Company{}, schema.User{}, false, err
	}
	items = append(items, audit...)
	u := in.Admin
	u.ID, u.CompanyID, u.IsAdmin, u.Active = uid, id, true, true
	userItems, u, err := s.txCreateUser(ctx, u)
	if err != nil {
		return schema.Company{}, schema.User{}, false, err
	}
	keyItems, err := s.txCreateAPIKey(ctx, schema.APIKey{ID: keyID, CompanyID: id, UserID: uid, Name: "first admin key"}, in.APIKey)
	if err != nil {
		return schema.Company{}, schema.User{}, false, err
	}
	err = s.t.Transact(ctx, append(append(items, userItems...), keyItems...))
	if ddb.ConditionFailedAt(err, 0) {
		// Created meanwhile under the same name.
		existing, err := s.CompanyByName(ctx, in.Name)
		return existing, schema.User{}, false, err
	}
	if err != nil {
		return schema.Company{}, schema.User{}, false, err
	}
	return c, u, true, nil
}

// SetCompanyActive deactivates or reactivates a company (recorded in its
// audit log) and returns it; changed is false when it already was so.
func (s *Tenancy) SetCompanyActive(ctx context.Context, id int64, active bool) (c schema.Company, changed bool, err error) {
	if err := s.t.GetItemConsistent(ctx, schema.CompanyKey(id), &c); err != nil {
		return schema.Company{}, false, err
	}
	if c.Active() == active {
		return c, false, nil
	}
	before := c.Active()
	var upd expression.UpdateBuilder
	cond := expression.AttributeExists(expression.Name("deactivated_at"))
	if active {
		c.DeactivatedAt = ""
		upd = expression.Remove(expression.Name("deactivated_at"))
	} else {
		c.DeactivatedAt = s.t.Stamp()
		upd = expression.Set(expression.Name("deactivated_at"), expression.Value(c.DeactivatedAt))
		cond = expression.AttributeNotExists(expression.Name("deactivated_at"))
	}
	item, err := s.t.TxUpdate(schema.CompanyKey(id), upd, &cond)
	if err != nil {
		return schema.Company{}, false, err
	}
	verb := map[bool]string{true: "company.reactivate", false: "company.deactivate"}[active]
	audit, err := s.l.TxAudit(ctx, id, ledger.AuditEntry{
		Action: verb, TargetType: "company", TargetID: strconv.FormatInt(id, 10),
		Changes: map[string]ledger.Change{"active": {Before: before, After: active}},
	})
	if err != nil {
		return schema.Company{}, false, err
	}
	err = s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...))
	if errors.Is(err, ddb.ErrConflict) {
		return c, false, nil // someone else made the same change
	}
	return c, err == nil, err
}

// ListCompanies returns one page of every company, by id (uncounted).
func (s *Tenancy) ListCompanies(ctx context.Context, q page.Request) (page.Page[schema.Company], error) {
	return page.ReadPage[schema.Company](ctx, s.t, page.List{Index: tabledef.GSI1, Partition: schema.CompaniesPK, Range: page.Digits, Forward: true}, q)
}
