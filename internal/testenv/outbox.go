package testenv

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// OutboxEvent returns the data of the company's outbox event id, and false
// when there is no such event.
func OutboxEvent(t testing.TB, st *store.Store, companyID int64, id string) (map[string]any, bool) {
	t.Helper()
	res, err := st.Client().GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(st.TableName()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			tabledef.PK: &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)},
			tabledef.SK: &types.AttributeValueMemberS{Value: schema.EventSK(id)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Item == nil {
		return nil, false
	}
	var it schema.EventItem
	if err := attributevalue.UnmarshalMap(res.Item, &it); err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	if err := json.Unmarshal([]byte(it.Data), &data); err != nil {
		t.Fatal(err)
	}
	return data, true
}
