package streamimage_test

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/streamimage"
)

func TestEntityFromBothImages(t *testing.T) {
	sdk := streamimage.FromSDK(map[string]ddbtypes.AttributeValue{
		"entity":     &ddbtypes.AttributeValueMemberS{Value: "export"},
		"id":         &ddbtypes.AttributeValueMemberS{Value: "e1"},
		"company_id": &ddbtypes.AttributeValueMemberN{Value: "7"},
		"flag":       &ddbtypes.AttributeValueMemberBOOL{Value: true},
	})
	lambda := streamimage.FromLambda(map[string]events.DynamoDBAttributeValue{
		"entity":     events.NewStringAttribute("export"),
		"id":         events.NewStringAttribute("e1"),
		"company_id": events.NewNumberAttribute("7"),
		"flag":       events.NewBooleanAttribute(true),
	})
	for name, get := range map[string]streamimage.Get{"sdk": sdk, "lambda": lambda} {
		if c, id, ok := streamimage.Entity(get, "export"); !ok || c != 7 || id != "e1" {
			t.Errorf("%s: %d %q %v", name, c, id, ok)
		}
		if _, _, ok := streamimage.Entity(get, "triage"); ok {
			t.Errorf("%s: another entity read as a job", name)
		}
		if _, ok := get("flag"); ok {
			t.Errorf("%s: a boolean read as a string", name)
		}
	}
	bad := streamimage.FromSDK(map[string]ddbtypes.AttributeValue{
		"entity": &ddbtypes.AttributeValueMemberS{Value: "export"}, "id": &ddbtypes.AttributeValueMemberS{Value: "e1"},
		"company_id": &ddbtypes.AttributeValueMemberN{Value: "0"}})
	if _, _, ok := streamimage.Entity(bad, "export"); ok {
		t.Error("company 0 read as a job")
	}
}
