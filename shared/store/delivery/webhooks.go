package delivery

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// MaxWebhooksPerCompany bounds a company's endpoints (kept by a counter
// written with each create and delete).
const MaxWebhooksPerCompany = 50

// ErrLimit is returned when a company already has the most items of a kind.
var ErrLimit = errors.New("limit reached")

// WebhookSecretRecord is what an endpoint's sealed secret is bound to.
func WebhookSecretRecord(companyID int64, id string) string {
	return fmt.Sprintf("webhook/%d/%s", companyID, id)
}

// NewWebhookID returns a random endpoint id; the secret is sealed to it
// before CreateWebhook.
func NewWebhookID() string { return uuid.NewString() }

// CreateWebhook stores a new endpoint (w.ID from NewWebhookID), counts it
// and records the audit entry, in one transaction; ErrLimit when the
// company has the most.
func (s *Deliveries) CreateWebhook(ctx context.Context, w schema.WebhookEndpoint) (schema.WebhookEndpoint, error) {
	w.CreatedAt = s.t.StampSortable()
	w.UpdatedAt = w.CreatedAt
	w.Key = schema.WebhookKey(w.CompanyID, w.ID)
	w.GSI1PK = schema.WebhookListPK(w.CompanyID)
	w.GSI1SK = w.CreatedAt + "#" + w.ID
	put, err := s.t.TxPutNew(w)
	if err != nil {
		return schema.WebhookEndpoint{}, err
	}
	below := expression.Or(expression.AttributeNotExists(expression.Name("value")),
		expression.Name("value").LessThan(expression.Value(MaxWebhooksPerCompany)))
	count, err := s.t.TxUpdate(schema.WebhookCounterKey(w.CompanyID), expression.Add(expression.Name("value"), expression.Value(1)), &below)
	if err != nil {
		return schema.WebhookEndpoint{}, err
	}
	audit, err := s.l.TxAudit(ctx, w.CompanyID, ledger.AuditEntry{
		Action: "webhook.create", TargetType: "webhook", TargetID: w.ID,
		Changes: map[string]ledger.Change{
			"url": {After: w.URL}, "types": {After: w.Types}, "description": {After: w.Description},
			"active": {After: w.Active}, "secret": {After: ledger.Secret},
			"kind": {After: w.KindOrDefault()}, "filter": {After: ledger.Nullable(w.Filter)},
		},
	})
	if err != nil {
		return schema.WebhookEndpoint{}, err
	}
	if err := s.t.Transact(ctx, append([]types.TransactWriteItem{put, count}, audit...)); errors.Is(err, ddb.ErrConflict) {
		return schema.WebhookEndpoint{}, ErrLimit
	} else if err != nil {
		return schema.WebhookEndpoint{}, err
	}
	return w, nil
}

// GetWebhook reads one endpoint of a company.
func (s *Deliveries) GetWebhook(ctx context.Context, companyID int64, id string) (schema.WebhookEndpoint, error) {
	var w schema.WebhookEndpoint
	err := s.t.GetItem(ctx, schema.WebhookKey(companyID, id), &w)
	return w, err
}

// ListWebhooks returns one page of a company's endpoints, oldest first,
// with their number.
func (s *Deliveries) ListWebhooks(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.WebhookEndpoint], error) {
	p, err := page.ReadPage[schema.WebhookEndpoint](ctx, s.t, page.List{Index: tabledef.GSI1, Partition: schema.WebhookListPK(companyID), Forward: true}, q)
	if err != nil {
		return page.Page[schema.WebhookEndpoint]{}, err
	}
	n, err := s.WebhookCount(ctx, companyID)
	return p.Counted(int64(n)), err
}

// AllWebhooks returns every endpoint of a company (at most
// MaxWebhooksPerCompany), for the dispatcher.
func (s *Deliveries) AllWebhooks(ctx context.Context, companyID int64) ([]schema.WebhookEndpoint, error) {
	var out []schema.WebhookEndpoint
	kc := expression.Key(tabledef.GSI1.PK).Equal(expression.Value(schema.WebhookListPK(companyID)))
	err := s.t.QueryAll(ctx, tabledef.GSI1.Name, kc, true, &out)
	return out, err
}

// WebhookCount is the company's number of endpoints, from its counter.
func (s *Deliveries) WebhookCount(ctx context.Context, companyID int64) (int, error) {
	var c struct {
		Value int `dynamodbav:"value"`
	}
	err := s.t.GetItem(ctx, schema.WebhookCounterKey(companyID), &c)
	if errors.Is(err, ddb.ErrNotFound) {
		return 0, nil
	}
	return c.Value, err
}

// WebhookChange lists what an update sets; nil keeps a value.
type WebhookChange struct {
	URL         *string
	Types       *[]string
	Description *string
	Active      *bool
	Filter      *string // "" removes it
	// Rotation: the new sealed secret, and the old one kept until the time.
	SealedSecret, PrevSealedSecret, PrevSecretUntil *string
	// Failure bookkeeping of the dispatcher.
	FailingSince   *string // "" removes it
	DisabledReason *string // "" removes it
	// ReceivesFrom is set by ChangeWebhook when the change widens what
	// the endpoint receives.
	ReceivesFrom *string
}

// UpdateWebhook applies ch and returns the new endpoint (ddb.ErrNotFound when
// it is gone): the dispatcher's bookkeeping, which is no administrative
// change (ChangeWebhook is).
func (s *Deliveries) UpdateWebhook(ctx context.Context, companyID int64, id string, ch WebhookChange) (schema.WebhookEndpoint, error) {
	var out schema.WebhookEndpoint
	err := s.t.Update(ctx, schema.WebhookKey(companyID, id), ch.expression(s.t.StampSortable()), nil, &out)
	return out, err
}

func (ch WebhookChange) expression(updatedAt string) expression.UpdateBuilder {
	upd := expression.Set(expression.Name("updated_at"), expression.Value(updatedAt))
	set := func(name string, v *string) {
		switch {
		case v == nil:
		case *v == "":
			upd = upd.Remove(expression.Name(name))
		default:
			upd = upd.Set(expression.Name(name), expression.Value(*v))
		}
	}
	set("url", ch.URL)
	set("sealed_secret", ch.SealedSecret)
	set("prev_sealed_secret", ch.PrevSealedSecret)
	set("prev_secret_until", ch.PrevSecretUntil)
	set("failing_since", ch.FailingSince)
	set("disabled_reason", ch.DisabledReason)
	set("receives_from", ch.ReceivesFrom)
	set("filter", ch.Filter)
	if ch.Description != nil {
		upd = upd.Set(expression.Name("description"), expression.Value(*ch.Description))
	}
	if ch.Types != nil {
		upd = upd.Set(expression.Name("types"), expression.Value(*ch.Types))
	}
	if ch.Active != nil {
		upd = upd.Set(expression.Name("active"), expression.Value(*ch.Active))
	}
	return upd
}

// apply is w with ch made.
func (ch WebhookChange) apply(w schema.WebhookEndpoint) schema.WebhookEndpoint {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&w.URL, ch.URL)
	set(&w.Description, ch.Description)
	set(&w.SealedSecret, ch.SealedSecret)
	set(&w.PrevSealedSecret, ch.PrevSealedSecret)
	set(&w.PrevSecretUntil, ch.PrevSecretUntil)
	set(&w.FailingSince, ch.FailingSince)
	set(&w.DisabledReason, ch.DisabledReason)
	set(&w.ReceivesFrom, ch.ReceivesFrom)
	set(&w.Filter, ch.Filter)
	if ch.Types != nil {
		w.Types = *ch.Types
	}
	if ch.Active != nil {
		w.Active = *ch.Active
	}
	return w
}

// webhookChanges is the audit record of a change from before to after;
// a new secret reads as ledger.Secret.
func webhookChanges(before, after schema.WebhookEndpoint) map[string]ledger.Change {
	out := map[string]ledger.Change{}
	str := func(name, b, a string) {
		if b != a {
			out[name] = ledger.Change{Before: ledger.Nullable(b), After: ledger.Nullable(a)}
		}
	}
	str("url", before.URL, after.URL)
	str("description", before.Description, after.Description)
	str("disabled_reason", before.DisabledReason, after.DisabledReason)
	str("filter", before.Filter, after.Filter)
	if !slices.Equal(before.Types, after.Types) {
		out["types"] = ledger.Change{Before: before.Types, After: after.Types}
	}
	if before.Active != after.Active {
		out["active"] = ledger.Change{Before: before.Active, After: after.Active}
	}
	if before.SealedSecret != after.SealedSecret {
		out["secret"] = ledger.Change{Before: ledger.Secret, After: ledger.Secret}
	}
	return out
}

// ChangeWebhook is an administrative change of the endpoint before (as
// read by the caller): ch is applied with the audit entry of action in one
// transaction, and the endpoint after it returned. ddb.ErrNotFound when it is
// gone; ddb.ErrConflict when ch replaces the secret and another rotation came
// first (the previous secret kept must be the one replaced).
func (s *Deliveries) ChangeWebhook(ctx context.Context, before schema.WebhookEndpoint, ch WebhookChange, action string) (schema.WebhookEndpoint, error) {
	at := s.t.StampSortable()
	if widens(before, ch) {
		ch.ReceivesFrom = &at
	}
	after := ch.apply(before)
	after.UpdatedAt = at
	cond := expression.AttributeExists(expression.Name(tabledef.PK))
	if ch.SealedSecret != nil {
		cond = cond.And(expression.Name("sealed_secret").Equal(expression.Value(before.SealedSecret)))
	}
	item, err := s.t.TxUpdate(schema.WebhookKey(before.CompanyID, before.ID), ch.expression(after.UpdatedAt), &cond)
	if err != nil {
		return schema.WebhookEndpoint{}, err
	}
	audit, err := s.l.TxAudit(ctx, before.CompanyID, ledger.AuditEntry{
		Action: action, TargetType: "webhook", TargetID: before.ID, Changes: webhookChanges(before, after),
	})
	if err != nil {
		return schema.WebhookEndpoint{}, err
	}
	err = s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...))
	if errors.Is(err, ddb.ErrConflict) {
		if _, gerr := s.GetWebhook(ctx, before.CompanyID, before.ID); errors.Is(gerr, ddb.ErrNotFound) {
			return schema.WebhookEndpoint{}, ddb.ErrNotFound
		}
		return schema.WebhookEndpoint{}, ddb.ErrConflict
	}
	if err != nil {
		return schema.WebhookEndpoint{}, err
	}
	return after, nil
}

// widens reports whether ch makes the endpoint receive events it did not:
// it enables it, or subscribes it to another type.
func widens(before schema.WebhookEndpoint, ch WebhookChange) bool {
	if ch.Active != nil && *ch.Active && !before.Active {
		return true
	}
	if ch.Types != nil {
		for _, t := range *ch.Types {
			if !slices.Contains(before.Types, t) {
				return true
			}
		}
	}
	return false
}

// DeleteWebhook removes the endpoint w (as read by the caller), uncounts it
// and records the audit entry, in one transaction (ddb.ErrNotFound when it does
// not exist). Its delivery log stays until its items expire.
func (s *Deliveries) DeleteWebhook(ctx context.Context, w schema.WebhookEndpoint) error {
	del, err := s.t.TxDelete(schema.WebhookKey(w.CompanyID, w.ID), expression.AttributeExists(expression.Name(tabledef.PK)))
	if err != nil {
		return err
	}
	count, err := s.t.TxUpdate(schema.WebhookCounterKey(w.CompanyID), expression.Add(expression.Name("value"), expression.Value(-1)), nil)
	if err != nil {
		return err
	}
	audit, err := s.l.TxAudit(ctx, w.CompanyID, ledger.AuditEntry{
		Action: "webhook.delete", TargetType: "webhook", TargetID: w.ID,
		Changes: map[string]ledger.Change{"url": {Before: w.URL}, "types": {Before: w.Types}, "description": {Before: w.Description},
			"kind": {Before: w.KindOrDefault()}, "filter": {Before: ledger.Nullable(w.Filter)}},
	})
	if err != nil {
		return err
	}
	if err := s.t.Transact(ctx, append([]types.TransactWriteItem{del, count}, audit...)); errors.Is(err, ddb.ErrConflict) {
		return ddb.ErrNotFound
	} else if err != nil {
		return err
	}
	return nil
}
