// Package streamimage reads the string and number attributes of a new
// item's stream image, whether it comes from Lambda's event (AWS) or from
// the SDK (the local stream poller), so a worker decides what a new item
// asks of it the same way in both.
package streamimage

import (
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Get returns an attribute's string or number value, and whether the
// image has it as one.
type Get func(name string) (string, bool)

// FromLambda reads an image of a Lambda stream event.
func FromLambda(image map[string]events.DynamoDBAttributeValue) Get {
	return func(name string) (string, bool) {
		v, ok := image[name]
		if !ok {
			return "", false
		}
		switch v.DataType() {
		case events.DataTypeString:
			return v.String(), true
		case events.DataTypeNumber:
			return v.Number(), true
		}
		return "", false
	}
}

// FromSDK reads an image in SDK attribute values.
func FromSDK(image map[string]ddbtypes.AttributeValue) Get {
	return func(name string) (string, bool) {
		switch v := image[name].(type) {
		case *ddbtypes.AttributeValueMemberS:
			return v.Value, true
		case *ddbtypes.AttributeValueMemberN:
			return v.Value, true
		}
		return "", false
	}
}

// Entity reads an item of the given entity (its "entity" attribute) that
// names its company and id: the job items workers consume (exports, bulk
// triage operations). ok is false for any other item.
func Entity(get Get, entity string) (companyID int64, id string, ok bool) {
	kind, _ := get("entity")
	id, _ = get("id")
	company, _ := get("company_id")
	if kind != entity || id == "" {
		return 0, "", false
	}
	n, err := strconv.ParseInt(company, 10, 64)
	if err != nil || n <= 0 {
		return 0, "", false
	}
	return n, id, true
}
