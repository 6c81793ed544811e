package ddb

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/tabledef"
)

// GetItem reads one item into out; ErrNotFound when absent.
func (t *Table) GetItem(ctx context.Context, k Key, out any) error {
	res, err := Call(func() (*dynamodb.GetItemOutput, error) {
		return t.DB.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(t.Name), Key: k.AV(), ReturnConsumedCapacity: Total,
		})
	})
	if err != nil {
		return fmt.Errorf("get %s/%s: %w", k.PK, k.SK, err)
	}
	Record(ctx, Reading, res.ConsumedCapacity)
	if res.Item == nil {
		return ErrNotFound
	}
	return attributevalue.UnmarshalMap(res.Item, out)
}

// PutItem writes item (a struct, or an item already marshalled); with cond
// set, ErrConflict when the condition fails.
func (t *Table) PutItem(ctx context.Context, item any, cond *expression.ConditionBuilder) error {
	av, ok := item.(map[string]types.AttributeValue)
	if !ok {
		var err error
		if av, err = attributevalue.MarshalMap(item); err != nil {
			return fmt.Errorf("marshal item: %w", err)
		}
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(t.Name), Item: av, ReturnConsumedCapacity: Total}
	if cond != nil {
		expr, err := expression.NewBuilder().WithCondition(*cond).Build()
		if err != nil {
			return err
		}
		in.ConditionExpression = expr.Condition()
		in.ExpressionAttributeNames = expr.Names()
		in.ExpressionAttributeValues = expr.Values()
	}
	res, err := Call(func() (*dynamodb.PutItemOutput, error) { return t.DB.PutItem(ctx, in) })
	if IsConditionFailed(err) {
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("put item: %w", err)
	}
	Record(ctx, Writing, res.ConsumedCapacity)
	return nil
}

// DeleteItem removes an item (absent or not).
func (t *Table) DeleteItem(ctx context.Context, k Key) error {
	res, err := Call(func() (*dynamodb.DeleteItemOutput, error) {
		return t.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(t.Name), Key: k.AV(), ReturnConsumedCapacity: Total})
	})
	if err != nil {
		return fmt.Errorf("delete %s/%s: %w", k.PK, k.SK, err)
	}
	Record(ctx, Writing, res.ConsumedCapacity)
	return nil
}

// PutNew writes item only if no item with its key exists (ErrConflict otherwise).
func (t *Table) PutNew(ctx context.Context, item any) error {
	c := expression.AttributeNotExists(expression.Name(tabledef.PK))
	return t.PutItem(ctx, item, &c)
}

// Update applies an update expression to an existing item and returns the
// new item in out. ErrNotFound when the item is absent; ErrConflict when an
// extra condition fails.
func (t *Table) Update(ctx context.Context, k Key, upd expression.UpdateBuilder, extra *expression.ConditionBuilder, out any) error {
	cond := expression.AttributeExists(expression.Name(tabledef.PK))
	if extra != nil {
		cond = cond.And(*extra)
	}
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return err
	}
	in := UpdateInput(t.Name, k, expr, types.ReturnValueAllNew)
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	res, err := Call(func() (*dynamodb.UpdateItemOutput, error) { return t.DB.UpdateItem(ctx, in) })
	if IsConditionFailed(err) {
		var ccf *types.ConditionalCheckFailedException
		if extra == nil || (errors.As(err, &ccf) && ccf.Item == nil) {
			return ErrNotFound
		}
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("update %s/%s: %w", k.PK, k.SK, err)
	}
	Record(ctx, Writing, res.ConsumedCapacity)
	if out == nil {
		return nil
	}
	return attributevalue.UnmarshalMap(res.Attributes, out)
}

// UpdateInput is an UpdateItem of k with expr (its condition, if any).
func UpdateInput(table string, k Key, expr expression.Expression, ret types.ReturnValue) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: k.AV(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues: ret, ReturnConsumedCapacity: Total,
	}
}

// Upsert applies an update expression, creating the item if needed.
func (t *Table) Upsert(ctx context.Context, k Key, upd expression.UpdateBuilder, out any) error {
	expr, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		return err
	}
	res, err := Call(func() (*dynamodb.UpdateItemOutput, error) {
		return t.DB.UpdateItem(ctx, UpdateInput(t.Name, k, expr, types.ReturnValueAllNew))
	})
	if err != nil {
		return fmt.Errorf("upsert %s/%s: %w", k.PK, k.SK, err)
	}
	Record(ctx, Writing, res.ConsumedCapacity)
	if out == nil {
		return nil
	}
	return attributevalue.UnmarshalMap(res.Attributes, out)
}

// QueryAll runs a key-condition query on the table or an index and reads
// every matching item (following pages). Use the paging functions for bounded reads.
func (t *Table) QueryAll(ctx context.Context, index string, kc expression.KeyConditionBuilder, forward bool, out any) error {
	var items []map[string]types.AttributeValue
	var start map[string]types.AttributeValue
	for {
		page, next, err := t.QueryRaw(ctx, index, kc, nil, forward, 0, start)
		if err != nil {
			return err
		}
		items = append(items, page...)
		if next == nil {
			break
		}
		start = next
	}
	return attributevalue.UnmarshalListOfMaps(items, out)
}

func (t *Table) QueryRaw(ctx context.Context, index string, kc expression.KeyConditionBuilder, filter *expression.ConditionBuilder,
	forward bool, limit int32, start map[string]types.AttributeValue) ([]map[string]types.AttributeValue, map[string]types.AttributeValue, error) {
	b := expression.NewBuilder().WithKeyCondition(kc)
	if filter != nil {
		b = b.WithFilter(*filter)
	}
	expr, err := b.Build()
	if err != nil {
		return nil, nil, err
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(t.Name), KeyConditionExpression: expr.KeyCondition(),
		FilterExpression:         expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ScanIndexForward: aws.Bool(forward), ExclusiveStartKey: start, ReturnConsumedCapacity: Total,
	}
	if index != "" {
		in.IndexName = aws.String(index)
	}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	res, err := Call(func() (*dynamodb.QueryOutput, error) { return t.DB.Query(ctx, in) })
	if err != nil {
		return nil, nil, fmt.Errorf("query: %w", err)
	}
	Record(ctx, Reading, res.ConsumedCapacity)
	return res.Items, res.LastEvaluatedKey, nil
}

// PKBeginsWith is a key condition on the table's own keys.
func PKBeginsWith(pk, prefix string) expression.KeyConditionBuilder {
	kc := expression.Key(tabledef.PK).Equal(expression.Value(pk))
	if prefix == "" {
		return kc
	}
	return kc.And(SKPrefix(tabledef.SK, prefix))
}

// SKPrefix matches sort keys starting with prefix, written as the
// equivalent range: DynamoDB Local answers begins_with by reading the
// partition from its first item, a range by seeking to it (as DynamoDB
// does for both). They agree on every key whose character after the prefix
// is below U+10FFFF, the last code point, which no key holds.
func SKPrefix(attr, prefix string) expression.KeyConditionBuilder {
	return expression.Key(attr).Between(expression.Value(prefix), expression.Value(prefix+"\U0010FFFF"))
}

// GetItemConsistent is getItem with a strongly consistent read, for reads a
// write decides on.
func (t *Table) GetItemConsistent(ctx context.Context, k Key, out any) error {
	in := &dynamodb.GetItemInput{TableName: aws.String(t.Name), Key: k.AV(), ConsistentRead: aws.Bool(true), ReturnConsumedCapacity: Total}
	res, err := Call(func() (*dynamodb.GetItemOutput, error) { return t.DB.GetItem(ctx, in) })
	if err != nil {
		return fmt.Errorf("get %s/%s: %w", k.PK, k.SK, err)
	}
	Record(ctx, Reading, res.ConsumedCapacity)
	if res.Item == nil {
		return ErrNotFound
	}
	return attributevalue.UnmarshalMap(res.Item, out)
}

// QueryAllConsistent reads a whole key range of the table with strongly
// consistent reads (the write paths here decide on what they read).
func (t *Table) QueryAllConsistent(ctx context.Context, kc expression.KeyConditionBuilder, out any) error {
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return err
	}
	var items []map[string]types.AttributeValue
	var start map[string]types.AttributeValue
	for {
		in := &dynamodb.QueryInput{
			TableName: aws.String(t.Name), KeyConditionExpression: expr.KeyCondition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ConsistentRead: aws.Bool(true), ExclusiveStartKey: start, ReturnConsumedCapacity: Total,
		}
		res, err := Call(func() (*dynamodb.QueryOutput, error) { return t.DB.Query(ctx, in) })
		if err != nil {
			return fmt.Errorf("query: %w", err)
		}
		Record(ctx, Reading, res.ConsumedCapacity)
		items = append(items, res.Items...)
		if start = res.LastEvaluatedKey; start == nil {
			return attributevalue.UnmarshalListOfMaps(items, out)
		}
	}
}

// Count is a COUNT query of index ("" for the table itself), every page
// of it, of the items that match kc and filter (nil for all). It returns
// no items, but DynamoDB charges it for every item the key condition
// reads, filtered out or not.
func (t *Table) Count(ctx context.Context, index string, kc expression.KeyConditionBuilder, filter *expression.ConditionBuilder) (int64, error) {
	b := expression.NewBuilder().WithKeyCondition(kc)
	if filter != nil {
		b = b.WithFilter(*filter)
	}
	expr, err := b.Build()
	if err != nil {
		return 0, err
	}
	var n int64
	var start map[string]types.AttributeValue
	for {
		in := &dynamodb.QueryInput{
			TableName: aws.String(t.Name), KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			Select: types.SelectCount, ExclusiveStartKey: start, ReturnConsumedCapacity: Total,
		}
		if index != "" {
			in.IndexName = aws.String(index)
		}
		res, err := Call(func() (*dynamodb.QueryOutput, error) { return t.DB.Query(ctx, in) })
		if err != nil {
			return 0, fmt.Errorf("count: %w", err)
		}
		Record(ctx, Reading, res.ConsumedCapacity)
		n += int64(res.Count)
		if res.LastEvaluatedKey == nil {
			return n, nil
		}
		start = res.LastEvaluatedKey
	}
}

// ConditionalUpsert applies upd to k (creating it) when cond holds and
// returns the item as it was before; ErrConflict when cond fails.
func (t *Table) ConditionalUpsert(ctx context.Context, k Key, upd expression.UpdateBuilder, cond expression.ConditionBuilder, old any) error {
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return err
	}
	res, err := Call(func() (*dynamodb.UpdateItemOutput, error) {
		return t.DB.UpdateItem(ctx, UpdateInput(t.Name, k, expr, types.ReturnValueAllOld))
	})
	if IsConditionFailed(err) {
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("update %s/%s: %w", k.PK, k.SK, err)
	}
	Record(ctx, Writing, res.ConsumedCapacity)
	return attributevalue.UnmarshalMap(res.Attributes, old)
}

// EachKeys calls fn with the table keys of the items of index that kc
// selects, in order, page items at a time (an empty page is not passed):
// for indexes that project keys only, whose items are then read by key.
func (t *Table) EachKeys(ctx context.Context, index string, kc expression.KeyConditionBuilder, page int32, fn func([]Key) error) error {
	var start map[string]types.AttributeValue
	for {
		items, next, err := t.QueryRaw(ctx, index, kc, nil, true, page, start)
		if err != nil {
			return err
		}
		keys := make([]Key, len(items))
		for n, it := range items {
			if err := attributevalue.UnmarshalMap(it, &keys[n]); err != nil {
				return err
			}
		}
		if len(keys) > 0 {
			if err := fn(keys); err != nil {
				return err
			}
		}
		if next == nil {
			return nil
		}
		start = next
	}
}
