package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/tabledef"
)

// RateLimit is how many requests a user may make per minute and per hour.
type RateLimit struct {
	PerMinute int
	PerHour   int
}

// rateWindow is one user's counters for one clock hour: the hour's total
// and one attribute per minute, so a single conditional write checks and
// counts both limits.
type rateWindow struct {
	Hour int `dynamodbav:"hour_count"`
}

// TakeRequest counts one request of a user against lim in fixed clock
// windows. When a limit is already reached nothing is counted and it
// returns how long until the window that is full ends.
func (s *Store) TakeRequest(ctx context.Context, companyID, userID int64, lim RateLimit, at time.Time) (allowed bool, retryAfter time.Duration, err error) {
	at = at.UTC()
	hourStart := at.Truncate(time.Hour)
	minute := fmt.Sprintf("m%02d", at.Minute())
	k := Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("RATE#%d#%s", userID, hourStart.Format("2006010215"))}

	hour, perMinute := expression.Name("hour_count"), expression.Name(minute)
	cond := expression.Or(expression.AttributeNotExists(hour), hour.LessThan(expression.Value(lim.PerHour))).
		And(expression.Or(expression.AttributeNotExists(perMinute), perMinute.LessThan(expression.Value(lim.PerMinute))))
	upd := expression.Add(hour, expression.Value(1)).
		Add(perMinute, expression.Value(1)).
		Set(expression.Name(tabledef.TTLAttribute), expression.Value(hourStart.Add(2*time.Hour).Unix()))
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
	if err != nil {
		return false, 0, err
	}
	res, err := call(func() (*dynamodb.UpdateItemOutput, error) {
		return s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.Table), Key: k.av(),
			UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnConsumedCapacity:              total,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		var w rateWindow
		if err := attributevalue.UnmarshalMap(ccf.Item, &w); err != nil {
			return false, 0, err
		}
		if w.Hour >= lim.PerHour {
			return false, hourStart.Add(time.Hour).Sub(at), nil
		}
		return false, at.Truncate(time.Minute).Add(time.Minute).Sub(at), nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("rate limit: %w", err)
	}
	record(ctx, writing, res.ConsumedCapacity)
	return true, 0, nil
}
