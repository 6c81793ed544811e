// Package dispatcher is the Lambda handler of the table stream's event
// source mapping: it hands the new outbox items to the delivery engine
// (shared/deliveryengine), which sends them.
package dispatcher

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Handler is the Lambda handler of the stream event source mapping: the
// new outbox items of the batch are dispatched, and the records of events
// that could not be handed over are reported as batch item failures, so
// Lambda retries from the first of them (and, after its retries, sends the
// batch's description to the failure destination).
func Handler(d *deliveryengine.Engine) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return func(ctx context.Context, in events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		return handle(ctx, d, in)
	}
}

func handle(ctx context.Context, d *deliveryengine.Engine, in events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var evs []schema.Event
	var seqs []string
	for _, r := range in.Records {
		if r.EventName != string(events.DynamoDBOperationTypeInsert) {
			continue
		}
		image, err := lambdaImage(r.Change.NewImage)
		if err != nil {
			d.Log.Error("stream record not readable, skipped", "sequence", r.Change.SequenceNumber, "error", err.Error())
			continue
		}
		ev, ok, err := schema.DecodeEventImage(image)
		if err != nil {
			d.Log.Error("outbox item not readable, skipped", "sequence", r.Change.SequenceNumber, "error", err.Error())
			continue
		}
		if ok {
			evs = append(evs, ev)
			seqs = append(seqs, r.Change.SequenceNumber)
		}
	}
	var out events.DynamoDBEventResponse
	failed := d.Dispatch(ctx, evs)
	for i := range evs {
		if _, bad := failed[i]; bad {
			out.BatchItemFailures = append(out.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: seqs[i]})
		}
	}
	return out, nil
}

// lambdaImage converts a Lambda stream image to SDK attribute values.
func lambdaImage(in map[string]events.DynamoDBAttributeValue) (map[string]ddbtypes.AttributeValue, error) {
	out := make(map[string]ddbtypes.AttributeValue, len(in))
	for k, v := range in {
		av, err := lambdaValue(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func lambdaValue(v events.DynamoDBAttributeValue) (ddbtypes.AttributeValue, error) {
	switch v.DataType() {
	case events.DataTypeString:
		return &ddbtypes.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &ddbtypes.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBoolean:
		return &ddbtypes.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeBinary:
		return &ddbtypes.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeNull:
		return &ddbtypes.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeStringSet:
		return &ddbtypes.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &ddbtypes.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &ddbtypes.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeMap:
		m, err := lambdaImage(v.Map())
		return &ddbtypes.AttributeValueMemberM{Value: m}, err
	case events.DataTypeList:
		var l []ddbtypes.AttributeValue
		for _, e := range v.List() {
			av, err := lambdaValue(e)
			if err != nil {
				return nil, err
			}
			l = append(l, av)
		}
		return &ddbtypes.AttributeValueMemberL{Value: l}, nil
	}
	return nil, fmt.Errorf("unknown attribute type %v", v.DataType())
}
