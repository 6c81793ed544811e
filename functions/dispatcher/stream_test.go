package dispatcher_test

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/functions/dispatcher"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/schema"
)

// lambdaAttr is an item's attribute as the Lambda stream event carries it.
func lambdaAttr(t *testing.T, v ddbtypes.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *ddbtypes.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *ddbtypes.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *ddbtypes.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *ddbtypes.AttributeValueMemberM:
		m := map[string]events.DynamoDBAttributeValue{}
		for k, e := range v.Value {
			m[k] = lambdaAttr(t, e)
		}
		return events.NewMapAttribute(m)
	}
	t.Fatalf("attribute %T in an outbox item", v)
	return events.DynamoDBAttributeValue{}
}

// The Lambda handler dispatches the batch's new outbox items (one delivery
// each, even when the batch repeats a record), skips other records, and
// reports as batch item failures only the events it could not hand over.
func TestHandlerDispatchesNewOutboxItems(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	c := w.env.Company(t, "Stream"+randomSuffix())
	rcv := newReceiver(t)
	w.endpoint(t, c, rcv.URL+"/hook", "scan_completed")
	ev := scanCompleted(c.ID, "cccccccc-0000-4000-8000-000000000001")
	if err := w.env.Store.Ledger.RecordEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	res, err := w.env.Store.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(w.env.Store.TableName()), Key: map[string]ddbtypes.AttributeValue{
		"PK": &ddbtypes.AttributeValueMemberS{Value: schema.CompanyPK(c.ID)}, "SK": &ddbtypes.AttributeValueMemberS{Value: "EVENT#" + ev.ID},
	}})
	if err != nil || res.Item == nil {
		t.Fatalf("outbox item: %v", err)
	}
	image := lambdaAttr(t, &ddbtypes.AttributeValueMemberM{Value: res.Item}).Map()
	record := func(name events.DynamoDBOperationType, seq string, image map[string]events.DynamoDBAttributeValue) events.DynamoDBEventRecord {
		return events.DynamoDBEventRecord{EventName: string(name), Change: events.DynamoDBStreamRecord{SequenceNumber: seq, NewImage: image}}
	}
	other := map[string]events.DynamoDBAttributeValue{"PK": events.NewStringAttribute("X"), "entity": events.NewStringAttribute("project")}
	out, err := dispatcher.Handler(w.d)(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record(events.DynamoDBOperationTypeInsert, "1", image),
		record(events.DynamoDBOperationTypeModify, "2", image),
		record(events.DynamoDBOperationTypeInsert, "3", other),
		record(events.DynamoDBOperationTypeInsert, "4", image),
	}})
	if err != nil || len(out.BatchItemFailures) != 0 {
		t.Fatalf("failures %+v (%v)", out.BatchItemFailures, err)
	}
	if got := rcv.received(); len(got) != 1 || got[0].header.Get("webhook-id") != ev.ID {
		t.Fatalf("receiver got %d requests", len(got))
	}

	// An event whose recipients cannot be read (the table is gone) is a
	// failure of its record.
	broken := *w.d
	table := "missing-table"
	broken.Store = deliveryengine.StoreOf(store.New(w.env.Store.Client(), table))
	out, err = dispatcher.Handler(&broken)(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{record(events.DynamoDBOperationTypeInsert, "5", image)}})
	if err != nil || len(out.BatchItemFailures) != 1 || out.BatchItemFailures[0].ItemIdentifier != "5" {
		t.Fatalf("failures %+v (%v)", out.BatchItemFailures, err)
	}
}
