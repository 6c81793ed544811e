package ddb

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Each calls fn with every item of the table the key condition matches,
// page by page.
func Each[T any](ctx context.Context, t *Table, kc expression.KeyConditionBuilder, fn func(T) error) error {
	return EachIn(ctx, t, "", kc, fn)
}

// EachIn is Each over an index ("" for the table).
func EachIn[T any](ctx context.Context, t *Table, index string, kc expression.KeyConditionBuilder, fn func(T) error) error {
	var start map[string]types.AttributeValue
	for {
		items, next, err := t.QueryRaw(ctx, index, kc, nil, true, 0, start)
		if err != nil {
			return err
		}
		for _, it := range items {
			var v T
			if err := attributevalue.UnmarshalMap(it, &v); err != nil {
				return err
			}
			if err := fn(v); err != nil {
				return err
			}
		}
		if next == nil {
			return nil
		}
		start = next
	}
}
