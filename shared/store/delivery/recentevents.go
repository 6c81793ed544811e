package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// MaxRecentRead bounds the index items one RecentEvents call reads (the
// events of other types included).
const MaxRecentRead = 5000

// RecordRecentEvent adds a dispatched event to its company's recent-event
// index (again: the same item), kept for schema.RecentEventTTL.
func (s *Deliveries) RecordRecentEvent(ctx context.Context, e schema.Event) error {
	data := string(e.Data)
	if data == "" {
		data = "{}"
	}
	it := schema.RecentEvent{Key: schema.RecentEventKey(e.CompanyID, e.CreatedAt, e.ID), ID: e.ID, CompanyID: e.CompanyID, Type: e.Type,
		CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339Nano), Data: data, ExpiresAt: e.CreatedAt.Add(schema.RecentEventTTL).Unix()}
	return s.t.PutItem(ctx, it, nil)
}

// RecentEvents returns up to limit of the company's events recorded after
// since, newest first, of the given types (any when none); it reads at
// most MaxRecentRead index items.
func (s *Deliveries) RecentEvents(ctx context.Context, companyID int64, since time.Time, typeCodes []string, limit int) ([]schema.Event, error) {
	kc := expression.Key(tabledef.PK).Equal(expression.Value(schema.RecentEventPK(companyID))).
		And(expression.Key(tabledef.SK).GreaterThan(expression.Value(ddb.SortableTime(since))))
	var filter *expression.ConditionBuilder
	if len(typeCodes) > 0 {
		ops := make([]expression.OperandBuilder, 0, len(typeCodes))
		for _, t := range typeCodes[1:] {
			ops = append(ops, expression.Value(t))
		}
		f := expression.Name("type").In(expression.Value(typeCodes[0]), ops...)
		filter = &f
	}
	var out []schema.Event
	var start map[string]types.AttributeValue
	for read := 0; len(out) < limit && read < MaxRecentRead; {
		page := int32(min(MaxRecentRead-read, 500))
		items, next, err := s.t.QueryRaw(ctx, "", kc, filter, false, page, start)
		if err != nil {
			return nil, err
		}
		read += int(page)
		var got []schema.RecentEvent
		if err := attributevalue.UnmarshalListOfMaps(items, &got); err != nil {
			return nil, err
		}
		for _, it := range got {
			at, err := time.Parse(time.RFC3339Nano, it.CreatedAt)
			if err != nil {
				return nil, fmt.Errorf("recent event %s: %w", it.ID, err)
			}
			out = append(out, schema.Event{ID: it.ID, CompanyID: it.CompanyID, Type: it.Type, CreatedAt: at, Data: json.RawMessage(it.Data)})
			if len(out) == limit {
				break
			}
		}
		if next == nil {
			break
		}
		start = next
	}
	return out, nil
}
