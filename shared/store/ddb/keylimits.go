package ddb

import (
	"context"
	"fmt"
	"regexp"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/acme/codescan-api/shared/tabledef"
)

// DynamoDB's limits on key attribute values, in bytes.
const (
	MaxPartitionKeyBytes = 2048
	MaxSortKeyBytes      = 1024
)

// KeyTooLongError is a key value past DynamoDB's limit. It comes from a
// request value (a name, a path, a filter) that the edge let through, and is
// the client's error, not the service's: the last line of defence behind the
// bounds the route table declares.
type KeyTooLongError struct {
	Bytes, Max int
}

func (e *KeyTooLongError) Error() string {
	return fmt.Sprintf("a value of the request is too long (%d bytes; a key holds at most %d)", e.Bytes, e.Max)
}

// keyLimits refuses, before it is sent, every call whose key values break
// DynamoDB's limits (DynamoDB would answer a ValidationException).
// A client made from one that has it (a store over another store's
// client) keeps the one.
func keyLimits(stack *middleware.Stack) error {
	if _, ok := stack.Initialize.Get("KeyLimits"); ok {
		return nil
	}
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("KeyLimits",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if err := checkKeys(in.Parameters); err != nil {
				return middleware.InitializeOutput{}, middleware.Metadata{}, err
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
}

// keyLimit is the limit of a key attribute, 0 for any other attribute.
func keyLimit(attr string) int {
	if attr == tabledef.PK {
		return MaxPartitionKeyBytes
	}
	if attr == tabledef.SK {
		return MaxSortKeyBytes
	}
	for _, ix := range tabledef.Indexes {
		switch attr {
		case ix.PK:
			return MaxPartitionKeyBytes
		case ix.SK:
			return MaxSortKeyBytes
		}
	}
	return 0
}

func checkItem(item map[string]types.AttributeValue) error {
	for attr, v := range item {
		if err := checkValue(keyLimit(attr), v); err != nil {
			return err
		}
	}
	return nil
}

func checkValue(limit int, v types.AttributeValue) error {
	s, ok := v.(*types.AttributeValueMemberS)
	if limit == 0 || !ok || len(s.Value) <= limit {
		return nil
	}
	return &KeyTooLongError{Bytes: len(s.Value), Max: limit}
}

func checkKeys(params any) error {
	var items []map[string]types.AttributeValue
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		items = append(items, in.Key)
	case *dynamodb.PutItemInput:
		items = append(items, in.Item)
	case *dynamodb.UpdateItemInput:
		items = append(items, in.Key)
	case *dynamodb.DeleteItemInput:
		items = append(items, in.Key)
	case *dynamodb.QueryInput:
		items = append(items, in.ExclusiveStartKey)
		if err := checkKeyCondition(in); err != nil {
			return err
		}
	case *dynamodb.BatchGetItemInput:
		for _, ka := range in.RequestItems {
			items = append(items, ka.Keys...)
		}
	case *dynamodb.BatchWriteItemInput:
		for _, reqs := range in.RequestItems {
			for _, r := range reqs {
				if r.PutRequest != nil {
					items = append(items, r.PutRequest.Item)
				}
				if r.DeleteRequest != nil {
					items = append(items, r.DeleteRequest.Key)
				}
			}
		}
	case *dynamodb.TransactGetItemsInput:
		for _, t := range in.TransactItems {
			if t.Get != nil {
				items = append(items, t.Get.Key)
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, t := range in.TransactItems {
			switch {
			case t.Put != nil:
				items = append(items, t.Put.Item)
			case t.Update != nil:
				items = append(items, t.Update.Key)
			case t.Delete != nil:
				items = append(items, t.Delete.Key)
			case t.ConditionCheck != nil:
				items = append(items, t.ConditionCheck.Key)
			}
		}
	}
	for _, item := range items {
		if err := checkItem(item); err != nil {
			return err
		}
	}
	return nil
}

var conditionToken = regexp.MustCompile(`#?[A-Za-z_][A-Za-z0-9_]*|:[A-Za-z0-9_]+`)

// checkKeyCondition checks the values a query's key condition compares
// with key attributes: each value placeholder belongs to the attribute
// named last before it (`#0 = :0 AND begins_with (#1, :1)`).
func checkKeyCondition(in *dynamodb.QueryInput) error {
	if in.KeyConditionExpression == nil {
		return nil
	}
	limit := 0
	for _, tok := range conditionToken.FindAllString(*in.KeyConditionExpression, -1) {
		switch tok[0] {
		case ':':
			if err := checkValue(limit, in.ExpressionAttributeValues[tok]); err != nil {
				return err
			}
		case '#':
			limit = keyLimit(in.ExpressionAttributeNames[tok])
		default:
			if l := keyLimit(tok); l > 0 {
				limit = l
			}
		}
	}
	return nil
}
