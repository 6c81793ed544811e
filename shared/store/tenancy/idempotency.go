package tenancy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

const (
	// IdempotencyRetention is how long an Idempotency-Key is remembered.
	IdempotencyRetention = 24 * time.Hour
	// idempotencyLease is how long a request in progress holds its key: a
	// request that died mid-way (a Lambda timeout) frees it after that,
	// well past API Gateway's 29-second limit.
	idempotencyLease = 5 * time.Minute
)

// Idempotency states.
const (
	idemPending = "pending"
	idemDone    = "done"
)

// IdempotencyRecord is what a key already holds: the fingerprint of the
// request that took it, and its answer once Done.
type IdempotencyRecord struct {
	Fingerprint string
	Done        bool
	Answer      schema.IdempotentAnswer
}

// IdempotencyClaim is a key taken by a request in progress.
type IdempotencyClaim struct {
	k     ddb.Key
	token string
}

// ClaimIdempotencyKey takes key for a request of subject (see RateSubject)
// whose content hashes to fingerprint. It returns the claim when the key
// was free (unused, expired, or held by a request whose lease ran out),
// else the record the key holds.
func (s *Tenancy) ClaimIdempotencyKey(ctx context.Context, companyID int64, subject, key, fingerprint string, at time.Time) (*IdempotencyClaim, *IdempotencyRecord, error) {
	token := make([]byte, 16)
	_, _ = rand.Read(token)
	c := &IdempotencyClaim{k: schema.IdempotencyKey(companyID, subject, key), token: hex.EncodeToString(token)}
	item, err := attributevalue.MarshalMap(schema.IdempotencyItem{Key: c.k, Fingerprint: fingerprint, State: idemPending, Claim: c.token,
		LeaseUntil: at.Add(idempotencyLease).Unix(), ExpiresAt: at.Add(IdempotencyRetention).Unix()})
	if err != nil {
		return nil, nil, err
	}
	now := expression.Value(at.Unix())
	state := expression.Name("state")
	free := expression.AttributeNotExists(expression.Name(tabledef.PK)).
		Or(expression.Name(tabledef.TTLAttribute).LessThan(now)). // expired, not yet swept by TTL
		Or(state.Equal(expression.Value(idemPending)).And(expression.Name("lease_until").LessThan(now)))
	expr, err := expression.NewBuilder().WithCondition(free).Build()
	if err != nil {
		return nil, nil, err
	}
	res, err := ddb.Call(func() (*dynamodb.PutItemOutput, error) {
		return s.t.DB.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(s.t.Name), Item: item, ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnConsumedCapacity:              ddb.Total,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		var old schema.IdempotencyItem
		if err := attributevalue.UnmarshalMap(ccf.Item, &old); err != nil {
			return nil, nil, err
		}
		if old.Claim == c.token {
			return c, nil, nil // our own put, retried after a timeout that hid its success
		}
		return nil, &IdempotencyRecord{Fingerprint: old.Fingerprint, Done: old.State == idemDone, Answer: old.IdempotentAnswer}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("claim idempotency key: %w", err)
	}
	ddb.Record(ctx, ddb.Writing, res.ConsumedCapacity)
	return c, nil, nil
}

// CompleteIdempotencyKey keeps a's answer for replays, for the rest of the
// key's retention. ddb.ErrConflict when the claim was lost (its lease ran out
// and another request took the key).
func (s *Tenancy) CompleteIdempotencyKey(ctx context.Context, c *IdempotencyClaim, a schema.IdempotentAnswer) error {
	upd := expression.Set(expression.Name("state"), expression.Value(idemDone)).
		Set(expression.Name("status"), expression.Value(a.Status))
	if len(a.Header) > 0 {
		upd = upd.Set(expression.Name("header"), expression.Value(a.Header))
	}
	if len(a.Body) > 0 {
		upd = upd.Set(expression.Name("body"), expression.Value(a.Body))
	}
	if a.BodyWithheld {
		upd = upd.Set(expression.Name("body_withheld"), expression.Value(true))
	}
	ours := expression.Name("claim").Equal(expression.Value(c.token))
	return s.t.Update(ctx, c.k, upd, &ours, nil)
}

// ReleaseIdempotencyKey frees a claimed key (the request failed, so a
// retry with the key runs again). A claim already lost is left alone.
func (s *Tenancy) ReleaseIdempotencyKey(ctx context.Context, c *IdempotencyClaim) error {
	ours := expression.Name("claim").Equal(expression.Value(c.token))
	expr, err := expression.NewBuilder().WithCondition(ours).Build()
	if err != nil {
		return err
	}
	res, err := ddb.Call(func() (*dynamodb.DeleteItemOutput, error) {
		return s.t.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(s.t.Name), Key: c.k.AV(), ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnConsumedCapacity: ddb.Total,
		})
	})
	if ddb.IsConditionFailed(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	ddb.Record(ctx, ddb.Writing, res.ConsumedCapacity)
	return nil
}
