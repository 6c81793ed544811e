package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Event is a notification event in the outbox: written in the same
// transaction as the state change it describes, and delivered by the
// dispatcher, which reads the table's stream. ID is the delivery
// idempotency key (the Standard Webhooks webhook-id): producers derive it
// from what the event is about (scan id, issue id and status, ...) so a
// retried write records the same event, not a second one.
type Event struct {
	ID        string
	CompanyID int64
	Type      string // a notification type code (functions/notifications)
	CreatedAt time.Time
	Data      json.RawMessage // a JSON object, the payload's "data"
}

// EventEntity marks outbox items; the dispatcher's stream filter selects
// new items carrying it.
const EventEntity = "event"

// eventTTL is how long an outbox item stays after it is written: the stream
// carries it to the dispatcher within seconds, and the delivery items
// record what was sent.
const eventTTL = 7 * 24 * time.Hour

// EventItem is an event as stored (and as it appears in a stream record's
// new image). Data is kept as JSON text.
type EventItem struct {
	Key
	Entity    string `dynamodbav:"entity"`
	ID        string `dynamodbav:"id"`
	CompanyID int64  `dynamodbav:"company_id"`
	Type      string `dynamodbav:"type"`
	CreatedAt string `dynamodbav:"created_at"`
	Data      string `dynamodbav:"data"`
	ExpiresAt int64  `dynamodbav:"expires_at"`
}

// Event returns the item's event.
func (it EventItem) Event() (Event, error) {
	at, err := time.Parse(time.RFC3339Nano, it.CreatedAt)
	if err != nil {
		return Event{}, fmt.Errorf("event %s: created_at: %w", it.ID, err)
	}
	return Event{ID: it.ID, CompanyID: it.CompanyID, Type: it.Type, CreatedAt: at, Data: json.RawMessage(it.Data)}, nil
}

func eventKey(companyID int64, id string) Key {
	return Key{PK: CompanyPK(companyID), SK: "EVENT#" + id}
}

func (e Event) item(now time.Time) (EventItem, error) {
	if e.ID == "" || e.CompanyID == 0 || e.Type == "" {
		return EventItem{}, fmt.Errorf("event needs an id, a company and a type")
	}
	if len(e.ID) > 200 || strings.ContainsAny(e.ID, "# \t\n") {
		return EventItem{}, fmt.Errorf("event id %q: at most 200 characters, no '#' or white space", e.ID)
	}
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return EventItem{}, fmt.Errorf("event %s: data must be a JSON object: %w", e.ID, err)
	}
	at := e.CreatedAt
	if at.IsZero() {
		at = now
	}
	return EventItem{
		Key: eventKey(e.CompanyID, e.ID), Entity: EventEntity, ID: e.ID, CompanyID: e.CompanyID, Type: e.Type,
		CreatedAt: at.UTC().Format(time.RFC3339Nano), Data: string(data),
		ExpiresAt: at.Add(eventTTL).Unix(),
	}, nil
}

// txEvent is the Put that records e in a write path's transaction. It is
// unconditional: a retried transaction rewrites the same item (same id),
// which the stream reports as a MODIFY the dispatcher ignores.
func (s *Store) txEvent(e Event) (types.TransactWriteItem, error) {
	it, err := e.item(s.t.Clock())
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return s.t.TxPut(it, nil)
}

// RecordEvent records an event on its own, for producers whose state change
// is not a store write (a scheduled check, a digest).
func (s *Store) RecordEvent(ctx context.Context, e Event) error {
	it, err := e.item(s.t.Clock())
	if err != nil {
		return err
	}
	return s.t.PutItem(ctx, it, nil)
}

// DecodeEventImage returns the event of a stream record's new image, and
// false when the image is not an outbox item.
func DecodeEventImage(image map[string]types.AttributeValue) (Event, bool, error) {
	if e, ok := image["entity"].(*types.AttributeValueMemberS); !ok || e.Value != EventEntity {
		return Event{}, false, nil
	}
	var it EventItem
	if err := attributevalue.UnmarshalMap(image, &it); err != nil {
		return Event{}, true, err
	}
	ev, err := it.Event()
	return ev, true, err
}

// RecordEventOnce records e unless an event with its id was ever recorded:
// a marker item without expiry is written with the event in one
// transaction, so a check that runs again (the scheduled SLA check, the
// weekly digest) raises each event once, even after the outbox item has
// expired. It reports whether the event was new.
func (s *Store) RecordEventOnce(ctx context.Context, e Event) (bool, error) {
	it, err := e.item(s.t.Clock())
	if err != nil {
		return false, err
	}
	marker, err := s.t.TxPutNew(Key{PK: CompanyPK(e.CompanyID), SK: "ONCE#" + e.ID})
	if err != nil {
		return false, err
	}
	put, err := s.t.TxPut(it, nil)
	if err != nil {
		return false, err
	}
	err = s.t.Transact(ctx, []types.TransactWriteItem{marker, put})
	if errors.Is(err, ErrConflict) {
		return false, nil
	}
	return err == nil, err
}

// CompanyIDs returns every company id ever allocated (ids come from one
// counter, so this is 1..counter without reading any company), for the
// scheduled jobs that visit every company.
func (s *Store) CompanyIDs(ctx context.Context) ([]int64, error) {
	var c struct {
		Value int64 `dynamodbav:"value"`
	}
	err := s.t.GetItem(ctx, Key{PK: "SEQUENCE", SK: "company"}, &c)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]int64, 0, c.Value)
	for id := int64(1); id <= c.Value; id++ {
		out = append(out, id)
	}
	return out, nil
}
