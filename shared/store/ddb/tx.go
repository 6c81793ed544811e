package ddb

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/tabledef"
)

// MaxTxItems is DynamoDB's limit of items in one transaction.
const MaxTxItems = 100

// Transact writes items all-or-nothing. A failed condition is ErrConflict.
func (t *Table) Transact(ctx context.Context, items []types.TransactWriteItem) error {
	if len(items) > MaxTxItems {
		return fmt.Errorf("transaction of %d items exceeds %d", len(items), MaxTxItems)
	}
	// One idempotency token for every attempt: a transaction that did
	// commit before its answer was lost is not applied twice.
	in := &dynamodb.TransactWriteItemsInput{
		TransactItems: items, ReturnConsumedCapacity: Total, ClientRequestToken: aws.String(uuid.NewString()),
	}
	res, err := Call(func() (*dynamodb.TransactWriteItemsOutput, error) { return t.DB.TransactWriteItems(ctx, in) })
	if IsConditionFailed(err) {
		// The cause stays inspectable (see ConditionFailedAt).
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	if err != nil {
		return fmt.Errorf("transact write: %w", err)
	}
	RecordBatch(ctx, Writing, res.ConsumedCapacity)
	return nil
}

// TxPut is a Put for transact (of a struct, or of an item already
// marshalled); with cond, the put happens only if it holds.
func (t *Table) TxPut(item any, cond *expression.ConditionBuilder) (types.TransactWriteItem, error) {
	av, ok := item.(map[string]types.AttributeValue)
	if !ok {
		var err error
		if av, err = attributevalue.MarshalMap(item); err != nil {
			return types.TransactWriteItem{}, fmt.Errorf("marshal item: %w", err)
		}
	}
	put := &types.Put{TableName: aws.String(t.Name), Item: av}
	if cond != nil {
		expr, err := expression.NewBuilder().WithCondition(*cond).Build()
		if err != nil {
			return types.TransactWriteItem{}, err
		}
		put.ConditionExpression = expr.Condition()
		put.ExpressionAttributeNames = expr.Names()
		put.ExpressionAttributeValues = expr.Values()
	}
	return types.TransactWriteItem{Put: put}, nil
}

// TxPutNew is a Put that fails the transaction if the key exists.
func (t *Table) TxPutNew(item any) (types.TransactWriteItem, error) {
	c := expression.AttributeNotExists(expression.Name(tabledef.PK))
	return t.TxPut(item, &c)
}

// TxUpdate is an Update for transact.
func (t *Table) TxUpdate(k Key, upd expression.UpdateBuilder, cond *expression.ConditionBuilder) (types.TransactWriteItem, error) {
	b := expression.NewBuilder().WithUpdate(upd)
	if cond != nil {
		b = b.WithCondition(*cond)
	}
	expr, err := b.Build()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(t.Name), Key: k.AV(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// TxDeleteKey is an unconditional Delete for transact.
func (t *Table) TxDeleteKey(k Key) types.TransactWriteItem {
	return types.TransactWriteItem{Delete: &types.Delete{TableName: &t.Name, Key: k.AV()}}
}

// TxDelete is a conditional Delete for transact.
func (t *Table) TxDelete(k Key, cond expression.ConditionBuilder) (types.TransactWriteItem, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{Delete: &types.Delete{
		TableName: &t.Name, Key: k.AV(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}
