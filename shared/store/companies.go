package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Company is a tenant. A deactivated company's keys and tokens are refused.
type Company struct {
	Key
	GSI1PK        string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK        string `dynamodbav:"GSI1SK,omitempty"`
	ID            int64  `dynamodbav:"id"`
	Name          string `dynamodbav:"name"`
	CreatedAt     string `dynamodbav:"created_at,omitempty"`
	DeactivatedAt string `dynamodbav:"deactivated_at,omitempty"`
}

// Active reports whether the company's users may sign in.
func (c Company) Active() bool { return c.DeactivatedAt == "" }

type companyNameRef struct {
	Key
	CompanyID int64 `dynamodbav:"company_id"`
}

func (s *Store) companyItem(c Company) Company {
	c.Key = schema.CompanyKey(c.ID)
	c.GSI1PK, c.GSI1SK = schema.CompaniesPK, fmt.Sprintf("%012d", c.ID)
	if c.CreatedAt == "" {
		c.CreatedAt = s.t.Stamp()
	}
	return c
}

// PutCompany creates or replaces a company record and its name guard.
func (s *Store) PutCompany(ctx context.Context, c Company) error {
	if err := s.t.PutItem(ctx, companyNameRef{Key: schema.CompanyNameKey(c.Name), CompanyID: c.ID}, nil); err != nil {
		return err
	}
	return s.t.PutItem(ctx, s.companyItem(c), nil)
}

// GetCompany reads a company.
func (s *Store) GetCompany(ctx context.Context, id int64) (Company, error) {
	var c Company
	err := s.t.GetItem(ctx, schema.CompanyKey(id), &c)
	return c, err
}

// CompanyByName finds a company by name (ignoring case and surrounding
// space).
func (s *Store) CompanyByName(ctx context.Context, name string) (Company, error) {
	var ref companyNameRef
	if err := s.t.GetItemConsistent(ctx, schema.CompanyNameKey(name), &ref); err != nil {
		return Company{}, err
	}
	var c Company
	err := s.t.GetItemConsistent(ctx, schema.CompanyKey(ref.CompanyID), &c)
	return c, err
}

// NewCompany is what creating a tenant needs: its name, its first admin
// and that admin's first API key.
type NewCompany struct {
	Name   string
	Admin  User   // email and names; the rest is set here
	APIKey string // the admin's first key (only its hash is stored)
}

// CreateCompany creates a company, its first (active, admin) user and that
// user's first API key in one transaction with their audit entries. When a
// company of that name exists it returns it with created false and writes
// nothing.
func (s *Store) CreateCompany(ctx context.Context, in NewCompany) (c Company, admin User, created bool, err error) {
	existing, err := s.CompanyByName(ctx, in.Name)
	if err == nil {
		return existing, User{}, false, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return Company{}, User{}, false, err
	}
	id, err := s.NextID(ctx, "company")
	if err != nil {
		return Company{}, User{}, false, err
	}
	uid, err := s.NextUserID(ctx, id)
	if err != nil {
		return Company{}, User{}, false, err
	}
	keyID, err := s.nextAPIKeyID(ctx, id)
	if err != nil {
		return Company{}, User{}, false, err
	}
	c = s.companyItem(Company{ID: id, Name: strings.TrimSpace(in.Name)})
	guard, err := s.t.TxPutNew(companyNameRef{Key: schema.CompanyNameKey(c.Name), CompanyID: id})
	if err != nil {
		return Company{}, User{}, false, err
	}
	item, err := s.t.TxPutNew(c)
	if err != nil {
		return Company{}, User{}, false, err
	}
	items := []types.TransactWriteItem{guard, item}
	audit, err := s.l.TxAudit(ctx, id, AuditEntry{
		Action: "company.create", TargetType: "company", TargetID: strconv.FormatInt(id, 10),
		Changes: map[string]Change{"name": {After: c.Name}},
	})
	if err != nil {
		return Company{}, User{}, false, err
	}
	items = append(items, audit...)
	u := in.Admin
	u.ID, u.CompanyID, u.IsAdmin, u.Active = uid, id, true, true
	userItems, u, err := s.txCreateUser(ctx, u)
	if err != nil {
		return Company{}, User{}, false, err
	}
	keyItems, err := s.txCreateAPIKey(ctx, APIKey{ID: keyID, CompanyID: id, UserID: uid, Name: "first admin key"}, in.APIKey)
	if err != nil {
		return Company{}, User{}, false, err
	}
	err = s.t.Transact(ctx, append(append(items, userItems...), keyItems...))
	if ddb.ConditionFailedAt(err, 0) {
		// Created meanwhile under the same name.
		existing, err := s.CompanyByName(ctx, in.Name)
		return existing, User{}, false, err
	}
	if err != nil {
		return Company{}, User{}, false, err
	}
	return c, u, true, nil
}

// SetCompanyActive deactivates or reactivates a company (recorded in its
// audit log) and returns it; changed is false when it already was so.
func (s *Store) SetCompanyActive(ctx context.Context, id int64, active bool) (c Company, changed bool, err error) {
	if err := s.t.GetItemConsistent(ctx, schema.CompanyKey(id), &c); err != nil {
		return Company{}, false, err
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
		return Company{}, false, err
	}
	verb := map[bool]string{true: "company.reactivate", false: "company.deactivate"}[active]
	audit, err := s.l.TxAudit(ctx, id, AuditEntry{
		Action: verb, TargetType: "company", TargetID: strconv.FormatInt(id, 10),
		Changes: map[string]Change{"active": {Before: before, After: active}},
	})
	if err != nil {
		return Company{}, false, err
	}
	err = s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...))
	if errors.Is(err, ErrConflict) {
		return c, false, nil // someone else made the same change
	}
	return c, err == nil, err
}

// ListCompanies returns one page of every company, by id.
func (s *Store) ListCompanies(ctx context.Context, q PageQuery) ([]Company, PageResult, error) {
	var out []Company
	res, err := s.readPage(ctx, page.List{Index: tabledef.GSI1, Partition: schema.CompaniesPK, Range: digitKeys, Forward: true}, q, &out)
	return out, res, err
}

// nextCompanyID returns the next id of a company's own sequence, so the ids
// a company sees count only its own records. Records numbered before by a
// global sequence keep their ids: a sequence starts above the company's
// highest id of the kind, read from the last item under prefix (whose sort
// key ends in the zero-padded id and which holds it as "id"). That read may
// lag a concurrent write: callers put the new record on the condition that
// its key is new and take the next id when it is not.
func (s *Store) nextCompanyID(ctx context.Context, companyID int64, seq, prefix string) (int64, error) {
	var out struct {
		Value int64 `dynamodbav:"value"`
	}
	k := schema.CompanySeqKey(companyID, seq)
	err := s.t.Update(ctx, k, expression.Add(expression.Name("value"), expression.Value(1)), nil, &out)
	if !errors.Is(err, ErrNotFound) {
		return out.Value, err
	}
	items, _, err := s.t.QueryRaw(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), prefix), nil, false, 1, nil)
	if err != nil {
		return 0, err
	}
	var last []struct {
		ID int64 `dynamodbav:"id"`
	}
	if err := attributevalue.UnmarshalListOfMaps(items, &last); err != nil {
		return 0, err
	}
	floor := int64(0)
	if len(last) > 0 {
		floor = last[0].ID
	}
	name := expression.Name("value")
	upd := expression.Set(name, expression.Plus(expression.IfNotExists(name, expression.Value(floor)), expression.Value(1)))
	err = s.t.Upsert(ctx, k, upd, &out)
	return out.Value, err
}
