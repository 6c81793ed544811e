// Package localstream reads a table's stream through the DynamoDB Streams
// API of DynamoDB Local and hands new items to their consumers (new outbox
// items to the dispatcher, new scans of uploaded reports to the ingester):
// the dev server's and the tests' stand-in for the Lambda event source
// mappings (no Lambda binary imports it).
package localstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/acme/codescan-api/shared/awsclient"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/store/schema"
)

// NewClient returns a DynamoDB Streams client for DynamoDB Local's stream
// API at endpoint.
func NewClient(ctx context.Context, endpoint string) (*dynamodbstreams.Client, error) {
	return dynamodbstreams.NewFromConfig(awsclient.Static("us-east-1", "local", "local", ""), func(o *dynamodbstreams.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	}), nil
}

// Consumer handles the new image of an inserted item (and ignores the
// items that are not its own, as its event source mapping's filter does in
// AWS). An error makes the poller read the record again, for every
// consumer: consumers are idempotent.
type Consumer func(ctx context.Context, image map[string]ddbtypes.AttributeValue) error

// Poller reads the table's stream and hands each new item to every
// consumer: the dispatcher's (new outbox items to Dispatch) when Dispatcher
// is set, then Consumers.
//
// With a Checkpoint it goes on after a restart from the last record it
// handed over; without one it reads the stream from its trim horizon (24
// hours of changes) again. Either way an item written while no poller ran
// is handled after the restart, and an item handed over but not yet
// checkpointed is handed over again: the consumers' idempotence (the
// delivery claims, a scan ingested only while processing) makes that a
// no-op.
type Poller struct {
	Dispatcher *deliveryengine.Engine
	Consumers  []Consumer
	// DB and Table name the table whose stream is read: the stream's ARN
	// comes from DescribeTable, which no store method offers (only this
	// development poller needs it).
	DB    *dynamodb.Client
	Table string
	// Log receives the poller's errors (default: the dispatcher's, else
	// slog's default).
	Log     *slog.Logger
	Streams *dynamodbstreams.Client
	// Idle is the pause between reads that found nothing (default 200ms).
	Idle time.Duration
	// Checkpoint keeps the read position across restarts (default none).
	Checkpoint *Checkpoint
	// Caught, when set, is called after every round that found no new
	// record in any shard and met no error, its checkpoint (if any)
	// saved: what the stream held when the round began has been handed
	// over. Tests wait on it instead of sleeping.
	Caught func()
}

// DispatchConsumer hands new outbox items to d.Dispatch.
func DispatchConsumer(d *deliveryengine.Engine) Consumer {
	return func(ctx context.Context, image map[string]ddbtypes.AttributeValue) error {
		ev, ok, err := schema.DecodeEventImage(image)
		if err != nil {
			d.Log.Error("outbox item not readable, skipped", "error", err.Error())
			return nil
		}
		if ok {
			if failed := d.Dispatch(ctx, []schema.Event{ev}); len(failed) > 0 {
				return errors.New("dispatch failed")
			}
		}
		return nil
	}
}

func (p *Poller) consumers() []Consumer {
	var out []Consumer
	if p.Dispatcher != nil {
		out = append(out, DispatchConsumer(p.Dispatcher))
	}
	return append(out, p.Consumers...)
}

func (p *Poller) log() *slog.Logger {
	switch {
	case p.Log != nil:
		return p.Log
	case p.Dispatcher != nil:
		return p.Dispatcher.Log
	}
	return slog.Default()
}

// shardState is a shard's read position.
type shardState struct {
	iterator string // empty: not opened yet
	last     string // sequence number of the last record handed over
	done     bool   // closed and read to its end
}

// Run reads the stream until ctx ends.
func (p *Poller) Run(ctx context.Context) error {
	idle := p.Idle
	if idle <= 0 {
		idle = 200 * time.Millisecond
	}
	if p.DB == nil || p.Table == "" {
		return errors.New("stream poller: no table")
	}
	consumers := p.consumers()
	desc, err := p.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(p.Table)})
	if err != nil {
		return err
	}
	arn := aws.ToString(desc.Table.LatestStreamArn)
	if arn == "" {
		return fmt.Errorf("table %s has no stream", p.Table)
	}
	shards := map[string]*shardState{}
	saved := map[string]string{}
	if p.Checkpoint != nil {
		if saved, err = p.Checkpoint.load(arn); err != nil {
			return err
		}
		for id, seq := range saved {
			shards[id] = &shardState{last: seq}
		}
	}
	// The stream is described (for new shards) on the first round, after
	// a round that found nothing and after one that read a shard to its
	// end, not on every round: DynamoDB Local runs every call on one
	// SQLite thread, and DescribeStream there walks the stream's records,
	// so describing it on each round of records held the writes of a
	// 25,000-result ingestion up (docs/benchmarks.md, "The local stack").
	describe := true
	for ctx.Err() == nil {
		failed := false
		if describe {
			if err := p.discover(ctx, arn, shards); err != nil && ctx.Err() == nil {
				p.log().Error("stream poller: describe stream", "error", err.Error())
				failed = true
			}
		}
		got, described := 0, describe
		describe = false
		for id, s := range shards {
			if s.done {
				continue
			}
			n, err := p.readShard(ctx, arn, id, s, consumers)
			describe = describe || s.done
			if err != nil && ctx.Err() == nil {
				p.log().Error("stream poller: read shard", "shard", id, "error", err.Error())
				s.iterator = "" // reopen after the last record handed over
				failed = true
			}
			got += n
		}
		if p.Checkpoint != nil && moved(shards, saved) {
			if err := p.Checkpoint.save(arn, shards); err != nil {
				p.log().Error("stream poller: checkpoint", "error", err.Error())
				failed = true
			}
			saved = positions(shards)
		}
		if got == 0 && described && !failed && ctx.Err() == nil && p.Caught != nil {
			p.Caught()
		}
		if got == 0 || failed {
			describe = true
		}
		if got == 0 && described {
			select {
			case <-ctx.Done():
			case <-time.After(idle):
			}
		}
	}
	return nil
}

func (p *Poller) discover(ctx context.Context, arn string, shards map[string]*shardState) error {
	var start *string
	for {
		out, err := p.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn), ExclusiveStartShardId: start})
		if err != nil {
			return err
		}
		for _, sh := range out.StreamDescription.Shards {
			if _, ok := shards[aws.ToString(sh.ShardId)]; !ok {
				shards[aws.ToString(sh.ShardId)] = &shardState{}
			}
		}
		if out.StreamDescription.LastEvaluatedShardId == nil {
			return nil
		}
		start = out.StreamDescription.LastEvaluatedShardId
	}
}

// readShard reads one batch of a shard and hands its new items to the
// consumers; when one fails it stays before the failed record, to read it
// again.
func (p *Poller) readShard(ctx context.Context, arn, id string, s *shardState, consumers []Consumer) (int, error) {
	if s.iterator == "" {
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String(id), ShardIteratorType: types.ShardIteratorTypeTrimHorizon}
		if s.last != "" {
			in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(s.last)
		}
		it, err := p.Streams.GetShardIterator(ctx, in)
		if err != nil {
			var gone *types.ResourceNotFoundException
			if errors.As(err, &gone) {
				s.done = true
				return 0, nil
			}
			var trimmed *types.TrimmedDataAccessException
			if errors.As(err, &trimmed) && s.last != "" {
				s.last = "" // a checkpoint older than the stream's retention
				return 0, nil
			}
			return 0, err
		}
		s.iterator = aws.ToString(it.ShardIterator)
		if s.iterator == "" {
			s.done = true
			return 0, nil
		}
	}
	// As many records a call as the API gives (1,000): each call is a
	// turn on DynamoDB Local's one SQLite thread, which the writes wait for.
	out, err := p.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(s.iterator), Limit: aws.Int32(1000)})
	if err != nil {
		var expired *types.ExpiredIteratorException
		var trimmed *types.TrimmedDataAccessException
		if errors.As(err, &expired) || errors.As(err, &trimmed) {
			s.iterator = ""
			return 0, nil
		}
		return 0, err
	}
	for _, r := range out.Records {
		seq := aws.ToString(r.Dynamodb.SequenceNumber)
		if r.EventName == types.OperationTypeInsert {
			image, err := streamImage(r.Dynamodb.NewImage)
			if err != nil {
				return 0, err
			}
			for _, c := range consumers {
				if err := c(ctx, image); err != nil {
					if ctx.Err() == nil {
						p.log().Error("stream poller: consumer failed, read again", "sequence", seq, "error", err.Error())
					}
					s.iterator = "" // read it again from after s.last
					return len(out.Records), nil
				}
			}
		}
		s.last = seq
	}
	s.iterator = aws.ToString(out.NextShardIterator)
	if s.iterator == "" {
		s.done = true
	}
	return len(out.Records), nil
}

// streamImage converts a Streams API image to DynamoDB attribute values.
func streamImage(in map[string]types.AttributeValue) (map[string]ddbtypes.AttributeValue, error) {
	out := make(map[string]ddbtypes.AttributeValue, len(in))
	for k, v := range in {
		av, err := streamValue(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func streamValue(v types.AttributeValue) (ddbtypes.AttributeValue, error) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return &ddbtypes.AttributeValueMemberS{Value: v.Value}, nil
	case *types.AttributeValueMemberN:
		return &ddbtypes.AttributeValueMemberN{Value: v.Value}, nil
	case *types.AttributeValueMemberBOOL:
		return &ddbtypes.AttributeValueMemberBOOL{Value: v.Value}, nil
	case *types.AttributeValueMemberB:
		return &ddbtypes.AttributeValueMemberB{Value: v.Value}, nil
	case *types.AttributeValueMemberNULL:
		return &ddbtypes.AttributeValueMemberNULL{Value: v.Value}, nil
	case *types.AttributeValueMemberSS:
		return &ddbtypes.AttributeValueMemberSS{Value: v.Value}, nil
	case *types.AttributeValueMemberNS:
		return &ddbtypes.AttributeValueMemberNS{Value: v.Value}, nil
	case *types.AttributeValueMemberBS:
		return &ddbtypes.AttributeValueMemberBS{Value: v.Value}, nil
	case *types.AttributeValueMemberM:
		m, err := streamImage(v.Value)
		return &ddbtypes.AttributeValueMemberM{Value: m}, err
	case *types.AttributeValueMemberL:
		var l []ddbtypes.AttributeValue
		for _, e := range v.Value {
			av, err := streamValue(e)
			if err != nil {
				return nil, err
			}
			l = append(l, av)
		}
		return &ddbtypes.AttributeValueMemberL{Value: l}, nil
	}
	return nil, fmt.Errorf("unknown attribute type %T", v)
}
