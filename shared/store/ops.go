package store

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

// Key is a primary key.
type Key struct {
	PK string `dynamodbav:"PK"`
	SK string `dynamodbav:"SK"`
}

func (k Key) av() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		tabledef.PK: &types.AttributeValueMemberS{Value: k.PK},
		tabledef.SK: &types.AttributeValueMemberS{Value: k.SK},
	}
}

// getItem reads one item into out; ErrNotFound when absent.
func (s *Store) getItem(ctx context.Context, k Key, out any) error {
	res, err := call(func() (*dynamodb.GetItemOutput, error) {
		return s.DB.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.Table), Key: k.av(), ReturnConsumedCapacity: total,
		})
	})
	if err != nil {
		return fmt.Errorf("get %s/%s: %w", k.PK, k.SK, err)
	}
	record(ctx, reading, res.ConsumedCapacity)
	if res.Item == nil {
		return ErrNotFound
	}
	return attributevalue.UnmarshalMap(res.Item, out)
}

// putItem writes item (a struct, or an item already marshalled); with cond
// set, ErrConflict when the condition fails.
func (s *Store) putItem(ctx context.Context, item any, cond *expression.ConditionBuilder) error {
	av, ok := item.(map[string]types.AttributeValue)
	if !ok {
		var err error
		if av, err = attributevalue.MarshalMap(item); err != nil {
			return fmt.Errorf("marshal item: %w", err)
		}
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: av, ReturnConsumedCapacity: total}
	if cond != nil {
		expr, err := expression.NewBuilder().WithCondition(*cond).Build()
		if err != nil {
			return err
		}
		in.ConditionExpression = expr.Condition()
		in.ExpressionAttributeNames = expr.Names()
		in.ExpressionAttributeValues = expr.Values()
	}
	res, err := call(func() (*dynamodb.PutItemOutput, error) { return s.DB.PutItem(ctx, in) })
	if isConditionFailed(err) {
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("put item: %w", err)
	}
	record(ctx, writing, res.ConsumedCapacity)
	return nil
}

// deleteItem removes an item (absent or not).
func (s *Store) deleteItem(ctx context.Context, k Key) error {
	res, err := call(func() (*dynamodb.DeleteItemOutput, error) {
		return s.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.Table), Key: k.av(), ReturnConsumedCapacity: total})
	})
	if err != nil {
		return fmt.Errorf("delete %s/%s: %w", k.PK, k.SK, err)
	}
	record(ctx, writing, res.ConsumedCapacity)
	return nil
}

// putNew writes item only if no item with its key exists (ErrConflict otherwise).
func (s *Store) putNew(ctx context.Context, item any) error {
	c := expression.AttributeNotExists(expression.Name(tabledef.PK))
	return s.putItem(ctx, item, &c)
}

// update applies an update expression to an existing item and returns the
// new item in out. ErrNotFound when the item is absent; ErrConflict when an
// extra condition fails.
func (s *Store) update(ctx context.Context, k Key, upd expression.UpdateBuilder, extra *expression.ConditionBuilder, out any) error {
	cond := expression.AttributeExists(expression.Name(tabledef.PK))
	if extra != nil {
		cond = cond.And(*extra)
	}
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return err
	}
	in := updateInput(s.Table, k, expr, types.ReturnValueAllNew)
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	res, err := call(func() (*dynamodb.UpdateItemOutput, error) { return s.DB.UpdateItem(ctx, in) })
	if isConditionFailed(err) {
		var ccf *types.ConditionalCheckFailedException
		if extra == nil || (errors.As(err, &ccf) && ccf.Item == nil) {
			return ErrNotFound
		}
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("update %s/%s: %w", k.PK, k.SK, err)
	}
	record(ctx, writing, res.ConsumedCapacity)
	if out == nil {
		return nil
	}
	return attributevalue.UnmarshalMap(res.Attributes, out)
}

// updateInput is an UpdateItem of k with expr (its condition, if any).
func updateInput(table string, k Key, expr expression.Expression, ret types.ReturnValue) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: k.av(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues: ret, ReturnConsumedCapacity: total,
	}
}

// upsert applies an update expression, creating the item if needed.
func (s *Store) upsert(ctx context.Context, k Key, upd expression.UpdateBuilder, out any) error {
	expr, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		return err
	}
	res, err := call(func() (*dynamodb.UpdateItemOutput, error) {
		return s.DB.UpdateItem(ctx, updateInput(s.Table, k, expr, types.ReturnValueAllNew))
	})
	if err != nil {
		return fmt.Errorf("upsert %s/%s: %w", k.PK, k.SK, err)
	}
	record(ctx, writing, res.ConsumedCapacity)
	if out == nil {
		return nil
	}
	return attributevalue.UnmarshalMap(res.Attributes, out)
}

// queryAll runs a key-condition query on the table or an index and reads
// every matching item (following pages). Use queryPage for bounded reads.
func (s *Store) queryAll(ctx context.Context, index string, kc expression.KeyConditionBuilder, forward bool, out any) error {
	var items []map[string]types.AttributeValue
	var start map[string]types.AttributeValue
	for {
		page, next, err := s.queryRaw(ctx, index, kc, nil, forward, 0, start)
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

func (s *Store) queryRaw(ctx context.Context, index string, kc expression.KeyConditionBuilder, filter *expression.ConditionBuilder,
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
		TableName: aws.String(s.Table), KeyConditionExpression: expr.KeyCondition(),
		FilterExpression:         expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ScanIndexForward: aws.Bool(forward), ExclusiveStartKey: start, ReturnConsumedCapacity: total,
	}
	if index != "" {
		in.IndexName = aws.String(index)
	}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	res, err := call(func() (*dynamodb.QueryOutput, error) { return s.DB.Query(ctx, in) })
	if err != nil {
		return nil, nil, fmt.Errorf("query: %w", err)
	}
	record(ctx, reading, res.ConsumedCapacity)
	return res.Items, res.LastEvaluatedKey, nil
}

// NextID returns the next integer id of a global sequence (atomic ADD).
func (s *Store) NextID(ctx context.Context, sequence string) (int64, error) {
	var out struct {
		Value int64 `dynamodbav:"value"`
	}
	upd := expression.Add(expression.Name("value"), expression.Value(1))
	if err := s.upsert(ctx, Key{PK: "SEQUENCE", SK: sequence}, upd, &out); err != nil {
		return 0, err
	}
	return out.Value, nil
}

// pkBeginsWith is a key condition on the table's own keys.
func pkBeginsWith(pk, prefix string) expression.KeyConditionBuilder {
	kc := expression.Key(tabledef.PK).Equal(expression.Value(pk))
	if prefix == "" {
		return kc
	}
	return kc.And(skPrefix(tabledef.SK, prefix))
}

// skPrefix matches sort keys starting with prefix, written as the
// equivalent range: DynamoDB Local answers begins_with by reading the
// partition from its first item, a range by seeking to it (as DynamoDB
// does for both). They agree on every key whose character after the prefix
// is below U+10FFFF, the last code point, which no key holds.
func skPrefix(attr, prefix string) expression.KeyConditionBuilder {
	return expression.Key(attr).Between(expression.Value(prefix), expression.Value(prefix+"\U0010FFFF"))
}
