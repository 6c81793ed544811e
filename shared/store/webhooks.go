package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/internal/ledger"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/tabledef"
)

// WebhookEndpoint is a company's webhook receiver. Its signing secret is
// stored only sealed (package secrets), bound to WebhookSecretRecord; after
// a rotation the previous secret keeps signing until PrevSecretUntil so
// receivers can switch without losing a delivery.
type WebhookEndpoint struct {
	Key
	GSI1PK           string   `dynamodbav:"GSI1PK"`
	GSI1SK           string   `dynamodbav:"GSI1SK"`
	ID               string   `dynamodbav:"id"`
	CompanyID        int64    `dynamodbav:"company_id"`
	URL              string   `dynamodbav:"url"`
	Types            []string `dynamodbav:"types"`
	Description      string   `dynamodbav:"description"`
	Active           bool     `dynamodbav:"active"`
	SealedSecret     string   `dynamodbav:"sealed_secret"`
	PrevSealedSecret string   `dynamodbav:"prev_sealed_secret,omitempty"`
	PrevSecretUntil  string   `dynamodbav:"prev_secret_until,omitempty"`
	// FailingSince is the first failed attempt after the last success;
	// an endpoint failing for WebhookDisableAfter is disabled.
	FailingSince   string `dynamodbav:"failing_since,omitempty"`
	DisabledReason string `dynamodbav:"disabled_reason,omitempty"`
	CreatedAt      string `dynamodbav:"created_at"`
	UpdatedAt      string `dynamodbav:"updated_at"`
	// ReceivesFrom is when the endpoint last began to receive events: its
	// creation, or the change that enabled it again or subscribed it to
	// more types. Events recorded before then are not its (as Stripe and
	// GitHub do: a new receiver gets no backlog). Empty: CreatedAt.
	ReceivesFrom string `dynamodbav:"receives_from,omitempty"`
}

// Receives reports whether an event recorded at t is the endpoint's: it
// was recorded when the endpoint was receiving events.
func (w WebhookEndpoint) Receives(t time.Time) bool {
	from := w.ReceivesFrom
	if from == "" {
		from = w.CreatedAt
	}
	since, err := time.Parse(time.RFC3339Nano, from)
	return err != nil || !t.Before(since)
}

// MaxWebhooksPerCompany bounds a company's endpoints (kept by a counter
// written with each create and delete).
const MaxWebhooksPerCompany = 50

// ErrLimit is returned when a company already has the most items of a kind.
var ErrLimit = errors.New("limit reached")

func webhookKey(companyID int64, id string) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: "WEBHOOK#" + id}
}

func webhookListPK(companyID int64) string { return schema.CompanyPK(companyID) + "#WEBHOOKS" }

func webhookCounterKey(companyID int64) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: "COUNT#WEBHOOKS"}
}

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
func (s *Store) CreateWebhook(ctx context.Context, w WebhookEndpoint) (WebhookEndpoint, error) {
	w.CreatedAt = s.t.StampSortable()
	w.UpdatedAt = w.CreatedAt
	w.Key = webhookKey(w.CompanyID, w.ID)
	w.GSI1PK = webhookListPK(w.CompanyID)
	w.GSI1SK = w.CreatedAt + "#" + w.ID
	put, err := s.t.TxPutNew(w)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	below := expression.Or(expression.AttributeNotExists(expression.Name("value")),
		expression.Name("value").LessThan(expression.Value(MaxWebhooksPerCompany)))
	count, err := s.t.TxUpdate(webhookCounterKey(w.CompanyID), expression.Add(expression.Name("value"), expression.Value(1)), &below)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	audit, err := s.l.TxAudit(ctx, w.CompanyID, AuditEntry{
		Action: "webhook.create", TargetType: "webhook", TargetID: w.ID,
		Changes: map[string]Change{
			"url": {After: w.URL}, "types": {After: w.Types}, "description": {After: w.Description},
			"active": {After: w.Active}, "secret": {After: Secret},
		},
	})
	if err != nil {
		return WebhookEndpoint{}, err
	}
	if err := s.t.Transact(ctx, append([]types.TransactWriteItem{put, count}, audit...)); errors.Is(err, ErrConflict) {
		return WebhookEndpoint{}, ErrLimit
	} else if err != nil {
		return WebhookEndpoint{}, err
	}
	return w, nil
}

// GetWebhook reads one endpoint of a company.
func (s *Store) GetWebhook(ctx context.Context, companyID int64, id string) (WebhookEndpoint, error) {
	var w WebhookEndpoint
	err := s.t.GetItem(ctx, webhookKey(companyID, id), &w)
	return w, err
}

// ListWebhooks returns one page of a company's endpoints, oldest first.
func (s *Store) ListWebhooks(ctx context.Context, companyID int64, q PageQuery) ([]WebhookEndpoint, PageResult, error) {
	var out []WebhookEndpoint
	res, err := s.readPage(ctx, page.List{Index: tabledef.GSI1, Partition: webhookListPK(companyID), Forward: true}, q, &out)
	return out, res, err
}

// AllWebhooks returns every endpoint of a company (at most
// MaxWebhooksPerCompany), for the dispatcher.
func (s *Store) AllWebhooks(ctx context.Context, companyID int64) ([]WebhookEndpoint, error) {
	var out []WebhookEndpoint
	kc := expression.Key(tabledef.GSI1.PK).Equal(expression.Value(webhookListPK(companyID)))
	err := s.t.QueryAll(ctx, tabledef.GSI1.Name, kc, true, &out)
	return out, err
}

// WebhookCount is the company's number of endpoints, from its counter.
func (s *Store) WebhookCount(ctx context.Context, companyID int64) (int, error) {
	var c struct {
		Value int `dynamodbav:"value"`
	}
	err := s.t.GetItem(ctx, webhookCounterKey(companyID), &c)
	if errors.Is(err, ErrNotFound) {
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
	// Rotation: the new sealed secret, and the old one kept until the time.
	SealedSecret, PrevSealedSecret, PrevSecretUntil *string
	// Failure bookkeeping of the dispatcher.
	FailingSince   *string // "" removes it
	DisabledReason *string // "" removes it
	// ReceivesFrom is set by ChangeWebhook when the change widens what
	// the endpoint receives.
	ReceivesFrom *string
}

// UpdateWebhook applies ch and returns the new endpoint (ErrNotFound when
// it is gone): the dispatcher's bookkeeping, which is no administrative
// change (ChangeWebhook is).
func (s *Store) UpdateWebhook(ctx context.Context, companyID int64, id string, ch WebhookChange) (WebhookEndpoint, error) {
	var out WebhookEndpoint
	err := s.t.Update(ctx, webhookKey(companyID, id), ch.expression(s.t.StampSortable()), nil, &out)
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
func (ch WebhookChange) apply(w WebhookEndpoint) WebhookEndpoint {
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
	if ch.Types != nil {
		w.Types = *ch.Types
	}
	if ch.Active != nil {
		w.Active = *ch.Active
	}
	return w
}

// webhookChanges is the audit record of a change from before to after;
// a new secret reads as Secret.
func webhookChanges(before, after WebhookEndpoint) map[string]Change {
	out := map[string]Change{}
	str := func(name, b, a string) {
		if b != a {
			out[name] = Change{Before: ledger.Nullable(b), After: ledger.Nullable(a)}
		}
	}
	str("url", before.URL, after.URL)
	str("description", before.Description, after.Description)
	str("disabled_reason", before.DisabledReason, after.DisabledReason)
	if !slices.Equal(before.Types, after.Types) {
		out["types"] = Change{Before: before.Types, After: after.Types}
	}
	if before.Active != after.Active {
		out["active"] = Change{Before: before.Active, After: after.Active}
	}
	if before.SealedSecret != after.SealedSecret {
		out["secret"] = Change{Before: Secret, After: Secret}
	}
	return out
}

// ChangeWebhook is an administrative change of the endpoint before (as
// read by the caller): ch is applied with the audit entry of action in one
// transaction, and the endpoint after it returned. ErrNotFound when it is
// gone; ErrConflict when ch replaces the secret and another rotation came
// first (the previous secret kept must be the one replaced).
func (s *Store) ChangeWebhook(ctx context.Context, before WebhookEndpoint, ch WebhookChange, action string) (WebhookEndpoint, error) {
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
	item, err := s.t.TxUpdate(webhookKey(before.CompanyID, before.ID), ch.expression(after.UpdatedAt), &cond)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	audit, err := s.l.TxAudit(ctx, before.CompanyID, AuditEntry{
		Action: action, TargetType: "webhook", TargetID: before.ID, Changes: webhookChanges(before, after),
	})
	if err != nil {
		return WebhookEndpoint{}, err
	}
	err = s.t.Transact(ctx, append([]types.TransactWriteItem{item}, audit...))
	if errors.Is(err, ErrConflict) {
		if _, gerr := s.GetWebhook(ctx, before.CompanyID, before.ID); errors.Is(gerr, ErrNotFound) {
			return WebhookEndpoint{}, ErrNotFound
		}
		return WebhookEndpoint{}, ErrConflict
	}
	if err != nil {
		return WebhookEndpoint{}, err
	}
	return after, nil
}

// widens reports whether ch makes the endpoint receive events it did not:
// it enables it, or subscribes it to another type.
func widens(before WebhookEndpoint, ch WebhookChange) bool {
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
// and records the audit entry, in one transaction (ErrNotFound when it does
// not exist). Its delivery log stays until its items expire.
func (s *Store) DeleteWebhook(ctx context.Context, w WebhookEndpoint) error {
	del, err := s.t.TxDelete(webhookKey(w.CompanyID, w.ID), expression.AttributeExists(expression.Name(tabledef.PK)))
	if err != nil {
		return err
	}
	count, err := s.t.TxUpdate(webhookCounterKey(w.CompanyID), expression.Add(expression.Name("value"), expression.Value(-1)), nil)
	if err != nil {
		return err
	}
	audit, err := s.l.TxAudit(ctx, w.CompanyID, AuditEntry{
		Action: "webhook.delete", TargetType: "webhook", TargetID: w.ID,
		Changes: map[string]Change{"url": {Before: w.URL}, "types": {Before: w.Types}, "description": {Before: w.Description}},
	})
	if err != nil {
		return err
	}
	if err := s.t.Transact(ctx, append([]types.TransactWriteItem{del, count}, audit...)); errors.Is(err, ErrConflict) {
		return ErrNotFound
	} else if err != nil {
		return err
	}
	return nil
}
