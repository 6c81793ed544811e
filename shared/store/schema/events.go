package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
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

// EventTTL is how long an outbox item stays after it is written: the stream
// carries it to the dispatcher within seconds, and the delivery items
// record what was sent.
const EventTTL = 7 * 24 * time.Hour

// EventItem is an event as stored (and as it appears in a stream record's
// new image). Data is kept as JSON text.
type EventItem struct {
	ddb.Key
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

func (e Event) Item(now time.Time) (EventItem, error) {
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
		Key: EventKey(e.CompanyID, e.ID), Entity: EventEntity, ID: e.ID, CompanyID: e.CompanyID, Type: e.Type,
		CreatedAt: at.UTC().Format(time.RFC3339Nano), Data: string(data),
		ExpiresAt: at.Add(EventTTL).Unix(),
	}, nil
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
