// Package localstream reads a table's stream through the DynamoDB Streams
// API of DynamoDB Local and hands new outbox items to the dispatcher: the
// dev server's and the tests' stand-in for the Lambda event source mapping
// (no Lambda binary imports it).
package localstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/acme/codescan-api/functions/dispatcher"
	"github.com/acme/codescan-api/shared/store"
)

// NewClient returns a DynamoDB Streams client for DynamoDB Local's stream
// API at endpoint.
func NewClient(ctx context.Context, endpoint string) (*dynamodbstreams.Client, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion("us-east-1"),
		awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	return dynamodbstreams.NewFromConfig(cfg, func(o *dynamodbstreams.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	}), nil
}

// Poller reads the table's stream and hands new outbox items to Dispatch.
//
// It keeps no checkpoint: after a restart it reads the stream from its trim
// horizon (24 hours of changes) again, and the delivery claims make every
// event already sent a no-op, so an event written while no poller ran, or
// whose sending was cut short, is delivered once after the restart.
type Poller struct {
	Dispatcher *dispatcher.Dispatcher
	Streams    *dynamodbstreams.Client
	// Idle is the pause between reads that found nothing (default 200ms).
	Idle time.Duration
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
	st := p.Dispatcher.Store
	desc, err := st.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(st.Table)})
	if err != nil {
		return err
	}
	arn := aws.ToString(desc.Table.LatestStreamArn)
	if arn == "" {
		return fmt.Errorf("table %s has no stream", st.Table)
	}
	shards := map[string]*shardState{}
	for ctx.Err() == nil {
		if err := p.discover(ctx, arn, shards); err != nil && ctx.Err() == nil {
			p.Dispatcher.Log.Error("stream poller: describe stream", "error", err.Error())
		}
		got := 0
		for id, s := range shards {
			if s.done {
				continue
			}
			n, err := p.readShard(ctx, arn, id, s)
			if err != nil && ctx.Err() == nil {
				p.Dispatcher.Log.Error("stream poller: read shard", "shard", id, "error", err.Error())
				s.iterator = "" // reopen after the last record handed over
			}
			got += n
		}
		if got == 0 {
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

// readShard reads one batch of a shard and dispatches its new outbox items;
// on a failed dispatch it stays before the failed record, to read it again.
func (p *Poller) readShard(ctx context.Context, arn, id string, s *shardState) (int, error) {
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
			return 0, err
		}
		s.iterator = aws.ToString(it.ShardIterator)
		if s.iterator == "" {
			s.done = true
			return 0, nil
		}
	}
	out, err := p.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(s.iterator), Limit: aws.Int32(100)})
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
			ev, ok, err := store.DecodeEventImage(image)
			if err != nil {
				p.Dispatcher.Log.Error("outbox item not readable, skipped", "sequence", seq, "error", err.Error())
			} else if ok {
				if failed := p.Dispatcher.Dispatch(ctx, []store.Event{ev}); len(failed) > 0 {
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
