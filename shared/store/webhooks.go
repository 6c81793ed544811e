package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

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
}

// MaxWebhooksPerCompany bounds a company's endpoints (kept by a counter
// written with each create and delete).
const MaxWebhooksPerCompany = 50

// ErrLimit is returned when a company already has the most items of a kind.
var ErrLimit = errors.New("limit reached")

func webhookKey(companyID int64, id string) Key {
	return Key{PK: CompanyPK(companyID), SK: "WEBHOOK#" + id}
}

func webhookListPK(companyID int64) string { return CompanyPK(companyID) + "#WEBHOOKS" }

func webhookCounterKey(companyID int64) Key {
	return Key{PK: CompanyPK(companyID), SK: "COUNT#WEBHOOKS"}
}

// WebhookSecretRecord is what an endpoint's sealed secret is bound to.
func WebhookSecretRecord(companyID int64, id string) string {
	return fmt.Sprintf("webhook/%d/%s", companyID, id)
}

// NewWebhookID returns a random endpoint id; the secret is sealed to it
// before CreateWebhook.
func NewWebhookID() string { return uuid.NewString() }

// CreateWebhook stores a new endpoint (w.ID from NewWebhookID) and counts
// it, in one transaction; ErrLimit when the company has the most.
func (s *Store) CreateWebhook(ctx context.Context, w WebhookEndpoint) (WebhookEndpoint, error) {
	w.CreatedAt = nowNano()
	w.UpdatedAt = w.CreatedAt
	w.Key = webhookKey(w.CompanyID, w.ID)
	w.GSI1PK = webhookListPK(w.CompanyID)
	w.GSI1SK = w.CreatedAt + "#" + w.ID
	put, err := s.txPutNew(w)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	below := expression.Or(expression.AttributeNotExists(expression.Name("value")),
		expression.Name("value").LessThan(expression.Value(MaxWebhooksPerCompany)))
	count, err := s.txUpdate(webhookCounterKey(w.CompanyID), expression.Add(expression.Name("value"), expression.Value(1)), &below)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	if err := s.transact(ctx, []types.TransactWriteItem{put, count}); errors.Is(err, ErrConflict) {
		return WebhookEndpoint{}, ErrLimit
	} else if err != nil {
		return WebhookEndpoint{}, err
	}
	return w, nil
}

// GetWebhook reads one endpoint of a company.
func (s *Store) GetWebhook(ctx context.Context, companyID int64, id string) (WebhookEndpoint, error) {
	var w WebhookEndpoint
	err := s.getItem(ctx, webhookKey(companyID, id), &w)
	return w, err
}

// ListWebhooks returns one page of a company's endpoints, oldest first, and
// the next page's token.
func (s *Store) ListWebhooks(ctx context.Context, companyID int64, limit int32, token string) ([]WebhookEndpoint, string, error) {
	var out []WebhookEndpoint
	next, err := s.queryPageExact(ctx, Page{
		Index: tabledef.GSI1.Name, PKAttr: tabledef.GSI1.PK, Partition: webhookListPK(companyID),
		Forward: true, Limit: limit, Token: token,
	}, tabledef.GSI1.SK, &out)
	return out, next, err
}

// AllWebhooks returns every endpoint of a company (at most
// MaxWebhooksPerCompany), for the dispatcher.
func (s *Store) AllWebhooks(ctx context.Context, companyID int64) ([]WebhookEndpoint, error) {
	var out []WebhookEndpoint
	kc := expression.Key(tabledef.GSI1.PK).Equal(expression.Value(webhookListPK(companyID)))
	err := s.queryAll(ctx, tabledef.GSI1.Name, kc, true, &out)
	return out, err
}

// WebhookCount is the company's number of endpoints, from its counter.
func (s *Store) WebhookCount(ctx context.Context, companyID int64) (int, error) {
	var c struct {
		Value int `dynamodbav:"value"`
	}
	err := s.getItem(ctx, webhookCounterKey(companyID), &c)
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
}

// UpdateWebhook applies ch and returns the new endpoint (ErrNotFound when
// it is gone).
func (s *Store) UpdateWebhook(ctx context.Context, companyID int64, id string, ch WebhookChange) (WebhookEndpoint, error) {
	upd := expression.Set(expression.Name("updated_at"), expression.Value(nowNano()))
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
	if ch.Description != nil {
		upd = upd.Set(expression.Name("description"), expression.Value(*ch.Description))
	}
	if ch.Types != nil {
		upd = upd.Set(expression.Name("types"), expression.Value(*ch.Types))
	}
	if ch.Active != nil {
		upd = upd.Set(expression.Name("active"), expression.Value(*ch.Active))
	}
	var out WebhookEndpoint
	err := s.update(ctx, webhookKey(companyID, id), upd, nil, &out)
	return out, err
}

// DeleteWebhook removes an endpoint and uncounts it (ErrNotFound when it
// does not exist). Its delivery log stays until its items expire.
func (s *Store) DeleteWebhook(ctx context.Context, companyID int64, id string) error {
	del, err := s.txDelete(webhookKey(companyID, id), expression.AttributeExists(expression.Name(tabledef.PK)))
	if err != nil {
		return err
	}
	count, err := s.txUpdate(webhookCounterKey(companyID), expression.Add(expression.Name("value"), expression.Value(-1)), nil)
	if err != nil {
		return err
	}
	if err := s.transact(ctx, []types.TransactWriteItem{del, count}); errors.Is(err, ErrConflict) {
		return ErrNotFound
	} else if err != nil {
		return err
	}
	return nil
}

// queryPageExact is queryPage without the empty last page: it reads one
// item more than the page and gives a next-page token only when that item
// exists (DynamoDB returns a LastEvaluatedKey whenever Limit is reached).
func (s *Store) queryPageExact(ctx context.Context, p Page, skAttr string, out any) (string, error) {
	start, err := decodeKeyToken(p.Token, p.PKAttr, p.Partition)
	if err != nil {
		return "", err
	}
	kc := expression.Key(p.PKAttr).Equal(expression.Value(p.Partition))
	items, _, err := s.queryRaw(ctx, p.Index, kc, nil, p.Forward, p.Limit+1, start)
	if start != nil && err != nil {
		err = badStart(err)
	}
	if err != nil {
		return "", err
	}
	next := ""
	if len(items) > int(p.Limit) {
		items = items[:p.Limit]
		last := map[string]types.AttributeValue{}
		for _, k := range []string{tabledef.PK, tabledef.SK, p.PKAttr, skAttr} {
			last[k] = items[len(items)-1][k]
		}
		if next, err = encodeKeyToken(last); err != nil {
			return "", err
		}
	}
	return next, attributevalue.UnmarshalListOfMaps(items, out)
}
