package lease

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// Fencing. A holder frozen past its lease (a long pause, a stalled
// network) may still have writes under way when the next holder takes the
// item; a lease alone cannot stop them. So every write a holder makes on
// the lease's behalf is conditional on the item still naming it: a
// transaction carries a condition check on the item (Check), or, when it
// writes the item itself, the item's condition (Cond). The next Take
// changes the owner and moves the epoch, so a late write of the last
// holder fails its condition instead of landing.

// epochAttr counts the item's Takes: the fencing token beside the owner,
// so that a holder reusing its owner string is fenced out all the same.
// Releases and completions keep it.
const epochAttr = "lease_epoch"

// ErrLost is what a holder's work ends with when its lease is gone: an
// extension was refused (Keep), or a fenced write was (see Fence). The
// work is to be started again under a new lease.
var ErrLost = errors.New("lease lost")

// Fence names one holding of the item: its owner and the epoch its Take
// made.
type Fence struct {
	Key   ddb.Key
	Owner string
	Epoch int64
}

// Cond holds while the item is held under f.
func (f Fence) Cond() expression.ConditionBuilder {
	return expression.Name("lease_owner").Equal(expression.Value(f.Owner)).
		And(expression.Name(epochAttr).Equal(expression.Value(f.Epoch)))
}

// Check is a transaction's condition check of f on the item, for
// transactions that do not write the item themselves.
func (f Fence) Check(t *ddb.Table) (types.TransactWriteItem, error) {
	expr, err := expression.NewBuilder().WithCondition(f.Cond()).Build()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(t.Name), Key: f.Key.AV(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// TakeFenced is Take, and returns the fence of the holding it made.
func TakeFenced(ctx context.Context, t *ddb.Table, k ddb.Key, owner string, out any, also ...Attr) (Fence, error) {
	old := &withEpoch{out: out}
	if err := Take(ctx, t, k, owner, old, also...); err != nil {
		return Fence{}, err
	}
	// Take adds one to the epoch in the write that returned the item as it
	// was: the holding's epoch is the one after.
	return Fence{Key: k, Owner: owner, Epoch: old.epoch + 1}, nil
}

// withEpoch decodes an item into out and its epoch.
type withEpoch struct {
	out   any
	epoch int64
}

func (w *withEpoch) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	if err := attributevalue.Unmarshal(av, w.out); err != nil {
		return err
	}
	var e struct {
		Epoch int64 `dynamodbav:"lease_epoch"`
	}
	err := attributevalue.Unmarshal(av, &e)
	w.epoch = e.Epoch
	return err
}
