package ingester_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/exportjob"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
	"github.com/acme/codescan-api/shared/store/exports"
	"github.com/acme/codescan-api/shared/store/schema"
)

// insertRecord is the stream record Lambda sends for the insert of the
// stored item at pk, sk: its string and number attributes, which are all
// the workers read.
func insertRecord(t *testing.T, env *testenv.Env, seq, pk, sk string) events.DynamoDBEventRecord {
	t.Helper()
	out, err := env.Store.Client().GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(env.Store.TableName()), ConsistentRead: aws.Bool(true),
		Key: map[string]ddbtypes.AttributeValue{"PK": &ddbtypes.AttributeValueMemberS{Value: pk}, "SK": &ddbtypes.AttributeValueMemberS{Value: sk}},
	})
	if err != nil || out.Item == nil {
		t.Fatalf("item %s %s: %v", pk, sk, err)
	}
	image := map[string]events.DynamoDBAttributeValue{}
	for k, v := range out.Item {
		switch v := v.(type) {
		case *ddbtypes.AttributeValueMemberS:
			image[k] = events.NewStringAttribute(v.Value)
		case *ddbtypes.AttributeValueMemberN:
			image[k] = events.NewNumberAttribute(v.Value)
		}
	}
	return events.DynamoDBEventRecord{EventName: string(events.DynamoDBOperationTypeInsert),
		Change: events.DynamoDBStreamRecord{SequenceNumber: seq, NewImage: image}}
}

// The ingester's stream handler runs export items through the export
// worker: a done export is handled; an attempt that failed in a way a
// retry may fix (here the bucket is missing) is a batch item failure, so
// Lambda delivers it again (and at last to the ingester's failure queue),
// and the last attempt ends the export failed with its reason, handled.
func TestStreamHandlerRunsExports(t *testing.T) {
	env := testenv.New(t)
	ctx := context.Background()
	c := env.Company(t, "Exports Inc")
	export := func() (schema.ExportItem, events.DynamoDBEventRecord) {
		t.Helper()
		e, err := env.Store.Exports.CreateExport(ctx, schema.ExportItem{CompanyID: c.ID, UserID: c.Admin.ID, Format: "jsonl", Filters: "{}", Query: "{}"})
		if err != nil {
			t.Fatal(err)
		}
		return e, insertRecord(t, env, "seq-"+e.ID, e.PK, e.SK)
	}

	in := env.Ingester(t)
	e, rec := export()
	res, err := in.HandleStream(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec}})
	if err != nil || len(res.BatchItemFailures) != 0 {
		t.Fatalf("export: %+v %v", res, err)
	}
	if done, err := env.Store.Exports.GetExport(ctx, c.ID, e.ID); err != nil || done.Status != exports.Done || done.Attempt != 1 || done.ObjectKey == "" {
		t.Fatalf("export after its delivery: %+v %v", done, err)
	}

	in.Exporter.Bucket = &s3reports.Store{Client: testenv.Reports(t).Client, Bucket: "no-such-bucket"}
	e, rec = export()
	for attempt := 1; attempt <= exportjob.MaxAttempts; attempt++ {
		res, err := in.HandleStream(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec}})
		got, gerr := env.Store.Exports.GetExport(ctx, c.ID, e.ID)
		if err != nil || gerr != nil || got.Attempt != attempt {
			t.Fatalf("attempt %d: %+v %v, export %+v %v", attempt, res, err, got, gerr)
		}
		if attempt < exportjob.MaxAttempts {
			if len(res.BatchItemFailures) != 1 || res.BatchItemFailures[0].ItemIdentifier != rec.Change.SequenceNumber || got.Status == exports.Failed {
				t.Fatalf("attempt %d: %+v, export %+v", attempt, res, got)
			}
			continue
		}
		want := fmt.Sprintf("could not be completed in %d attempts", exportjob.MaxAttempts)
		if len(res.BatchItemFailures) != 0 || got.Status != exports.Failed || !strings.Contains(got.Error, want) {
			t.Fatalf("last attempt: %+v, export %+v", res, got)
		}
	}
}
