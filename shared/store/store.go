// Package store is the single-table DynamoDB access layer. Every item a
// company owns lives under a partition key that starts with that company, so
// an id is only ever looked up inside the caller's company.
package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/tabledef"
)

// ErrNotFound is returned when an item does not exist in the caller's scope.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a conditional write finds the item in another
// state than expected (for example it already exists).
var ErrConflict = errors.New("conflict")

// Store wraps one DynamoDB table.
type Store struct {
	DB    *dynamodb.Client
	Table string
	// AuditRetention is how long audit entries live (DefaultAuditRetention
	// when zero).
	AuditRetention time.Duration
}

// New returns a Store for the table. Its client refuses key values past
// DynamoDB's limits before sending them (KeyTooLongError).
func New(db *dynamodb.Client, table string) *Store {
	db = dynamodb.New(db.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, keyLimits)
	})
	return &Store{DB: db, Table: table}
}

// Meter accumulates the consumed capacity and request count of every store
// call made with a context that carries it (see WithMeter).
type Meter struct {
	mu       sync.Mutex
	Requests int
	Read     float64
	Write    float64
}

type meterKey struct{}

// WithMeter returns a context whose store calls are measured by m.
func WithMeter(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// Snapshot returns the figures so far.
func (m *Meter) Snapshot() (requests int, rcu, wcu float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.Requests, m.Read, m.Write
}

// Whether a recorded call reads or writes, for capacity reports that carry
// only a total (DynamoDB Local's).
const (
	reading = false
	writing = true
)

func record(ctx context.Context, write bool, caps ...*types.ConsumedCapacity) {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Requests++
	for _, c := range caps {
		if c == nil {
			continue
		}
		switch {
		case c.ReadCapacityUnits != nil || c.WriteCapacityUnits != nil:
			m.Read += aws.ToFloat64(c.ReadCapacityUnits)
			m.Write += aws.ToFloat64(c.WriteCapacityUnits)
		case write:
			m.Write += aws.ToFloat64(c.CapacityUnits)
		default:
			m.Read += aws.ToFloat64(c.CapacityUnits)
		}
	}
}

// total is the capacity mode every call asks for so a Meter can add it up.
const total = types.ReturnConsumedCapacityTotal

// isConditionFailed reports whether err is a failed condition check, alone or
// inside a cancelled transaction.
func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return true
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if aws.ToString(r.Code) == "ConditionalCheckFailed" {
				return true
			}
		}
	}
	return false
}

// StreamSpec is the table's stream: new images, which the dispatcher and
// the ingester read.
func StreamSpec() *types.StreamSpecification {
	return &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
}

// CreateTable creates the table from tabledef (used locally and in tests;
// in AWS the stacks create it), with its stream when stream is set. When
// the table exists (a local data directory kept across restarts), it adds
// the indexes tabledef has and the table lacks (addIndexes). Only a table whose stream someone reads
// should have one: DynamoDB Local keeps every stream record of every table
// and slows down for all of them as they pile up (a test run's tables
// without streams seed the demo 10x faster by the third table).
func (s *Store) CreateTable(ctx context.Context, stream bool) error {
	var attrs []types.AttributeDefinition
	for _, n := range tabledef.AttributeNames() {
		attrs = append(attrs, types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS})
	}
	var gsis []types.GlobalSecondaryIndex
	for _, ix := range tabledef.Indexes {
		gsis = append(gsis, types.GlobalSecondaryIndex{
			IndexName: aws.String(ix.Name),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(ix.PK), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(ix.SK), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionType(ix.Projection)},
		})
	}
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(s.Table),
		AttributeDefinitions: attrs,
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(tabledef.PK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(tabledef.SK), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: gsis,
		BillingMode:            types.BillingModePayPerRequest,
	}
	if stream { // the notification dispatcher reads new outbox items from it (see Event)
		in.StreamSpecification = StreamSpec()
	}
	_, err := s.DB.CreateTable(ctx, in)
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) {
		return s.addIndexes(ctx, attrs, gsis)
	}
	if err != nil {
		return fmt.Errorf("create table %s: %w", s.Table, err)
	}
	return s.markDueIndexed(ctx)
}

// addIndexes creates, one at a time as DynamoDB requires, the indexes of
// gsis the existing table lacks, and waits until each is active. Items
// written before an index existed get its keys from their own backfill
// (BackfillDueIndex for Due).
func (s *Store) addIndexes(ctx context.Context, attrs []types.AttributeDefinition, gsis []types.GlobalSecondaryIndex) error {
	desc, err := s.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.Table)})
	if err != nil {
		return fmt.Errorf("describe table %s: %w", s.Table, err)
	}
	have := map[string]bool{}
	for _, ix := range desc.Table.GlobalSecondaryIndexes {
		have[aws.ToString(ix.IndexName)] = true
	}
	for _, ix := range gsis {
		if have[aws.ToString(ix.IndexName)] {
			continue
		}
		_, err := s.DB.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName: aws.String(s.Table), AttributeDefinitions: attrs,
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName: ix.IndexName, KeySchema: ix.KeySchema, Projection: ix.Projection,
			}}},
		})
		if err != nil {
			return fmt.Errorf("add index %s to %s: %w", aws.ToString(ix.IndexName), s.Table, err)
		}
		if err := s.awaitIndex(ctx, aws.ToString(ix.IndexName)); err != nil {
			return err
		}
	}
	return nil
}

// awaitIndex waits until the index is active.
func (s *Store) awaitIndex(ctx context.Context, name string) error {
	for {
		desc, err := s.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.Table)})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", s.Table, err)
		}
		for _, ix := range desc.Table.GlobalSecondaryIndexes {
			if aws.ToString(ix.IndexName) == name && ix.IndexStatus == types.IndexStatusActive {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
