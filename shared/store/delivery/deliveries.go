package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Delivery states.
const (
	DeliverySending   = "sending"
	DeliveryRetrying  = "retrying"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// RetryDuePartition is the retry index's partition: one per table, read by
// the scheduled retry pass (deliveries due are few at any moment).
const RetryDuePartition = "RETRYDUE"

// deliveryTTL keeps deliveries and their attempt log for the log's readers
// well past the last retry.
const deliveryTTL = 30 * 24 * time.Hour

// DeliveryID is the id of event's delivery on channel to recipient.
func DeliveryID(eventID, channel, recipient string) string {
	sum := sha256.Sum256([]byte(eventID + "\x00" + channel + "\x00" + recipient))
	return hex.EncodeToString(sum[:16])
}

func dueKey(at time.Time, companyID int64, id string) string {
	return fmt.Sprintf("%s#%d#%s", ddb.SortableTime(at), companyID, id)
}

// ClaimDelivery creates d as being sent by the caller until now+lease and
// reports true; when it exists, it reports false with the stored delivery
// (already sent, failed, waiting or being sent by someone else).
func (s *Deliveries) ClaimDelivery(ctx context.Context, d schema.Delivery, now time.Time, lease time.Duration) (schema.Delivery, bool, error) {
	d.Key = schema.DeliveryKey(d.CompanyID, d.ID)
	d.State = DeliverySending
	d.ClaimedUntil = ddb.SortableTime(now.Add(lease))
	d.GSI2PK, d.GSI2SK = RetryDuePartition, dueKey(now.Add(lease), d.CompanyID, d.ID)
	d.CreatedAt = ddb.SortableTime(now)
	d.ExpiresAt = now.Add(deliveryTTL).Unix()
	err := s.t.PutNew(ctx, d)
	if errors.Is(err, ddb.ErrConflict) {
		var cur schema.Delivery
		if err := s.t.GetItem(ctx, d.Key, &cur); err != nil {
			return schema.Delivery{}, false, err
		}
		return cur, false, nil
	}
	return d, err == nil, err
}

// GetDelivery reads one delivery of a company.
func (s *Deliveries) GetDelivery(ctx context.Context, companyID int64, id string) (schema.Delivery, error) {
	var d schema.Delivery
	err := s.t.GetItem(ctx, schema.DeliveryKey(companyID, id), &d)
	return d, err
}

// DueDeliveries returns up to limit deliveries due at now: retries whose
// time has come and claims whose sender let the lease run out.
func (s *Deliveries) DueDeliveries(ctx context.Context, now time.Time, limit int32) ([]schema.Delivery, error) {
	kc := expression.Key(tabledef.GSI2.PK).Equal(expression.Value(RetryDuePartition)).
		And(expression.Key(tabledef.GSI2.SK).LessThanEqual(expression.Value(ddb.SortableTime(now) + "#\U0010FFFF")))
	items, _, err := s.t.QueryRaw(ctx, tabledef.GSI2.Name, kc, nil, true, limit, nil)
	if err != nil {
		return nil, err
	}
	var out []schema.Delivery
	return out, attributevalue.UnmarshalListOfMaps(items, &out)
}

// ReclaimDelivery takes a delivery over for another attempt: one waiting
// for its retry time, or one whose sender's lease ran out; with anyState,
// also a delivered or failed one (a redelivery). It reports false when the
// delivery is not in such a state (someone else has it).
func (s *Deliveries) ReclaimDelivery(ctx context.Context, companyID int64, id string, now time.Time, lease time.Duration, anyState bool) (schema.Delivery, bool, error) {
	nowS := expression.Value(ddb.SortableTime(now))
	cond := expression.Or(
		expression.Name("state").Equal(expression.Value(DeliveryRetrying)).And(expression.Name("next_attempt_at").LessThanEqual(nowS)),
		expression.Name("state").Equal(expression.Value(DeliverySending)).And(expression.Name("claimed_until").LessThan(nowS)))
	if anyState {
		cond = expression.Or(cond, expression.Name("state").In(expression.Value(DeliveryDelivered),
			expression.Value(DeliveryFailed), expression.Value(DeliveryRetrying)))
	}
	until := now.Add(lease)
	upd := expression.Set(expression.Name("state"), expression.Value(DeliverySending)).
		Set(expression.Name("claimed_until"), expression.Value(ddb.SortableTime(until))).
		Set(expression.Name(tabledef.GSI2.PK), expression.Value(RetryDuePartition)).
		Set(expression.Name(tabledef.GSI2.SK), expression.Value(dueKey(until, companyID, id))).
		Remove(expression.Name("next_attempt_at"))
	var d schema.Delivery
	err := s.t.Update(ctx, schema.DeliveryKey(companyID, id), upd, &cond, &d)
	if errors.Is(err, ddb.ErrConflict) {
		return schema.Delivery{}, false, nil
	}
	return d, err == nil, err
}

// Attempt is the outcome of one try of a claimed delivery.
type Attempt struct {
	At         time.Time
	StatusCode int // 0 when no answer came
	Latency    time.Duration
	Error      string
	// Next is when to try again; zero when the delivery is finished.
	Next time.Time
	// Delivered reports success; with Next zero and Delivered false the
	// delivery has failed for good.
	Delivered bool
}

// Attempt outcomes, the filter values of an endpoint's log.
const (
	AttemptSucceeded = "succeeded"
	AttemptFailed    = "failed"
)

// FinishAttempt records a claimed delivery's attempt: the delivery's new
// state and, for webhooks, the attempt in the endpoint's log, in one
// transaction conditional on the caller still holding the claim
// (ddb.ErrConflict otherwise, and nothing is written).
func (s *Deliveries) FinishAttempt(ctx context.Context, d schema.Delivery, a Attempt) (schema.Delivery, error) {
	d.Attempts++
	d.LastAttemptAt = ddb.SortableTime(a.At)
	if d.FirstAttemptAt == "" {
		d.FirstAttemptAt = d.LastAttemptAt
	}
	d.LastStatus, d.LastError = a.StatusCode, a.Error
	claimed := d.ClaimedUntil
	d.ClaimedUntil, d.NextAttemptAt, d.GSI2PK, d.GSI2SK = "", "", "", ""
	switch {
	case a.Delivered:
		d.State = DeliveryDelivered
	case a.Next.IsZero():
		d.State = DeliveryFailed
	default:
		d.State = DeliveryRetrying
		d.NextAttemptAt = ddb.SortableTime(a.Next)
		d.GSI2PK, d.GSI2SK = RetryDuePartition, dueKey(a.Next, d.CompanyID, d.ID)
	}
	cond := expression.Name("state").Equal(expression.Value(DeliverySending)).
		And(expression.Name("claimed_until").Equal(expression.Value(claimed)))
	put, err := s.t.TxPut(d, &cond)
	if err != nil {
		return schema.Delivery{}, err
	}
	items := []types.TransactWriteItem{put}
	if d.Channel == ChannelWebhook || d.Channel == ChannelPullRequest { // a log per endpoint, per integration
		log := schema.AttemptLog{
			DeliveryID: d.ID, EventID: d.EventID, EventType: d.EventType, Attempt: d.Attempts,
			At: d.LastAttemptAt, Outcome: AttemptFailed, StatusCode: a.StatusCode,
			LatencyMS: a.Latency.Milliseconds(), Error: a.Error, NextRetryAt: d.NextAttemptAt,
			ExpiresAt: a.At.Add(deliveryTTL).Unix(),
		}
		if a.Delivered {
			log.Outcome = AttemptSucceeded
		}
		sk := fmt.Sprintf("%s#%s#%03d", log.At, d.ID, d.Attempts)
		log.Key = ddb.Key{PK: schema.AttemptLogPK(d.CompanyID, d.Recipient), SK: sk}
		log.GSI1PK, log.GSI1SK = schema.AttemptLogPK(d.CompanyID, d.Recipient)+"#"+log.Outcome, sk
		logPut, err := s.t.TxPut(log, nil)
		if err != nil {
			return schema.Delivery{}, err
		}
		items = append(items, logPut)
	}
	return d, s.t.Transact(ctx, items)
}

// ListAttempts returns one page of an endpoint's attempt log, newest first,
// all of them or only those with outcome (served by GSI1); uncounted.
func (s *Deliveries) ListAttempts(ctx context.Context, companyID int64, endpointID, outcome string, q page.Request) (page.Page[schema.AttemptLog], error) {
	l := page.List{Partition: schema.AttemptLogPK(companyID, endpointID)}
	if outcome != "" {
		l = page.List{Index: tabledef.GSI1, Partition: l.Partition + "#" + outcome}
	}
	return page.ReadPage[schema.AttemptLog](ctx, s.t, l, q)
}
