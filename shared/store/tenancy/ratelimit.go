package tenancy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// RateLimit is how many requests a credential may make per minute and per
// hour.
type RateLimit struct {
	PerMinute int
	PerHour   int
}

// RateState is a credential's budget after a request: the limit of the
// window closest to exhaustion, what is left of it and how long until that
// window ends. Allowed is false when the request was refused (nothing
// counted; Reset is then the wait).
type RateState struct {
	Allowed          bool
	Limit, Remaining int
	Reset            time.Duration
}

// rateWindow is one credential's counters for one clock hour: the hour's
// total and one attribute per minute, so a single conditional write checks
// and counts both limits.
type rateWindow struct {
	Hour int `dynamodbav:"hour_count"`
}

// RateSubject names the credential a budget belongs to: an API key, or a
// user (the bearer tokens of one user share one budget).
func RateSubject(keyID, userID int64) string { return schema.RateSubject(keyID, userID) }

// rateKey is the item and minute attribute counting a request at at.
func rateKey(companyID int64, subject string, at time.Time) (ddb.Key, string, time.Time) {
	hourStart := at.Truncate(time.Hour)
	return schema.RateKey(companyID, subject, hourStart.Format("2006010215")), fmt.Sprintf("m%02d", at.Minute()), hourStart
}

// TakeRequest counts one request of subject (see RateSubject) against lim
// in fixed clock windows. When a limit is already reached nothing is
// counted and the state says how long until the full window ends.
func (s *Tenancy) TakeRequest(ctx context.Context, companyID int64, subject string, lim RateLimit, at time.Time) (RateState, error) {
	at = at.UTC()
	k, minute, hourStart := rateKey(companyID, subject, at)
	hour, perMinute := expression.Name("hour_count"), expression.Name(minute)
	cond := expression.Or(expression.AttributeNotExists(hour), hour.LessThan(expression.Value(lim.PerHour))).
		And(expression.Or(expression.AttributeNotExists(perMinute), perMinute.LessThan(expression.Value(lim.PerMinute))))
	upd := expression.Add(hour, expression.Value(1)).
		Add(perMinute, expression.Value(1)).
		Set(expression.Name(tabledef.TTLAttribute), expression.Value(hourStart.Add(2*time.Hour).Unix()))
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
	if err != nil {
		return RateState{}, err
	}
	in := ddb.UpdateInput(s.t.Name, k, expr, types.ReturnValueUpdatedNew)
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	res, err := ddb.Call(func() (*dynamodb.UpdateItemOutput, error) { return s.t.DB.UpdateItem(ctx, in) })
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		hourUsed, minuteUsed, err := rateCounts(ccf.Item, minute)
		if err != nil {
			return RateState{}, err
		}
		st := rateState(lim, hourUsed, minuteUsed, at)
		st.Allowed = false
		return st, nil
	}
	if err != nil {
		return RateState{}, fmt.Errorf("rate limit: %w", err)
	}
	ddb.Record(ctx, ddb.Writing, res.ConsumedCapacity)
	hourUsed, minuteUsed, err := rateCounts(res.Attributes, minute)
	if err != nil {
		return RateState{}, err
	}
	st := rateState(lim, hourUsed, minuteUsed, at)
	st.Allowed = true
	return st, nil
}

// RefundRequest takes back a request TakeRequest counted at at (the same
// window and minute), for answers that cost nothing (a 304).
func (s *Tenancy) RefundRequest(ctx context.Context, companyID int64, subject string, at time.Time) error {
	k, minute, _ := rateKey(companyID, subject, at.UTC())
	hour, perMinute := expression.Name("hour_count"), expression.Name(minute)
	// Only a counted request is refunded, so counters never go below zero.
	cond := hour.GreaterThan(expression.Value(0)).And(perMinute.GreaterThan(expression.Value(0)))
	upd := expression.Add(hour, expression.Value(-1)).Add(perMinute, expression.Value(-1))
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
	if err != nil {
		return err
	}
	res, err := ddb.Call(func() (*dynamodb.UpdateItemOutput, error) {
		return s.t.DB.UpdateItem(ctx, ddb.UpdateInput(s.t.Name, k, expr, types.ReturnValueNone))
	})
	if ddb.IsConditionFailed(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rate limit refund: %w", err)
	}
	ddb.Record(ctx, ddb.Writing, res.ConsumedCapacity)
	return nil
}

// rateCounts reads the hour's and the minute's counts of a window item.
func rateCounts(item map[string]types.AttributeValue, minute string) (hour, perMinute int, err error) {
	var w rateWindow
	if err := attributevalue.UnmarshalMap(item, &w); err != nil {
		return 0, 0, err
	}
	if av, ok := item[minute]; ok {
		if err := attributevalue.Unmarshal(av, &perMinute); err != nil {
			return 0, 0, err
		}
	}
	return w.Hour, perMinute, nil
}

// rateState reports the window closest to exhaustion: the one with less
// left, the minute on a tie (it resets first), the hour once it is used up
// (no request passes before it ends).
func rateState(lim RateLimit, hourUsed, minuteUsed int, at time.Time) RateState {
	minuteLeft, hourLeft := max(lim.PerMinute-minuteUsed, 0), max(lim.PerHour-hourUsed, 0)
	if hourLeft == 0 || hourLeft < minuteLeft {
		return RateState{Limit: lim.PerHour, Remaining: hourLeft, Reset: at.Truncate(time.Hour).Add(time.Hour).Sub(at)}
	}
	return RateState{Limit: lim.PerMinute, Remaining: minuteLeft, Reset: at.Truncate(time.Minute).Add(time.Minute).Sub(at)}
}
