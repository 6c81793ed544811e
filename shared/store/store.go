// Package store is the single-table DynamoDB access layer. Every item a
// company owns lives under a partition key that starts with that company, so
// an id is only ever looked up inside the caller's company.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/ledger"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// The sentinel errors of every store call (defined by the table layer).
var (
	ErrNotFound    = ddb.ErrNotFound
	ErrConflict    = ddb.ErrConflict
	ErrUnavailable = ddb.ErrUnavailable
)

// Key is a primary key.
type Key = ddb.Key

// Meter accumulates the consumed capacity and request count of every store
// call made with a context that carries it (see WithMeter).
type Meter = ddb.Meter

// WithMeter returns a context whose store calls are measured by m.
func WithMeter(ctx context.Context, m *Meter) context.Context { return ddb.WithMeter(ctx, m) }

// Transient reports whether err is DynamoDB (or the way to it) asking to
// try again later (see ddb.Transient).
func Transient(err error) bool { return ddb.Transient(err) }

// SortableTime formats t in UTC with a fixed width (microseconds), so
// times compare as strings in sort keys.
func SortableTime(t time.Time) string { return ddb.SortableTime(t) }

// Store wraps one DynamoDB table.
type Store struct {
	t *ddb.Table
	l *ledger.Ledger
}

// Option configures a Store.
type Option func(*Store)

// WithAuditRetention sets how long audit entries live
// (DefaultAuditRetention when zero or unset).
func WithAuditRetention(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.l.Retention = d
		}
	}
}

// WithClock sets the clock the store stamps and decides with (time.Now
// when unset).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.t.Now = now } }

// New returns a Store for the table. Its client refuses key values past
// DynamoDB's limits before sending them (KeyTooLongError).
func New(db *dynamodb.Client, table string, opts ...Option) *Store {
	t := ddb.New(db, table)
	s := &Store{t: t, l: &ledger.Ledger{T: t, Retention: DefaultAuditRetention}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Client is the store's DynamoDB client (for tools and tests that read the
// table directly).
func (s *Store) Client() *dynamodb.Client { return s.t.DB }

// TableName is the store's table.
func (s *Store) TableName() string { return s.t.Name }

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
		TableName:            aws.String(s.t.Name),
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
	_, err := s.t.DB.CreateTable(ctx, in)
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) {
		return s.addIndexes(ctx, attrs, gsis)
	}
	if err != nil {
		return fmt.Errorf("create table %s: %w", s.t.Name, err)
	}
	return s.markDueIndexed(ctx)
}

// addIndexes creates, one at a time as DynamoDB requires, the indexes of
// gsis the existing table lacks, and waits until each is active. Items
// written before an index existed get its keys from their own backfill
// (BackfillDueIndex for Due).
func (s *Store) addIndexes(ctx context.Context, attrs []types.AttributeDefinition, gsis []types.GlobalSecondaryIndex) error {
	desc, err := s.t.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.t.Name)})
	if err != nil {
		return fmt.Errorf("describe table %s: %w", s.t.Name, err)
	}
	have := map[string]bool{}
	for _, ix := range desc.Table.GlobalSecondaryIndexes {
		have[aws.ToString(ix.IndexName)] = true
	}
	for _, ix := range gsis {
		if have[aws.ToString(ix.IndexName)] {
			continue
		}
		_, err := s.t.DB.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName: aws.String(s.t.Name), AttributeDefinitions: attrs,
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName: ix.IndexName, KeySchema: ix.KeySchema, Projection: ix.Projection,
			}}},
		})
		if err != nil {
			return fmt.Errorf("add index %s to %s: %w", aws.ToString(ix.IndexName), s.t.Name, err)
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
		desc, err := s.t.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.t.Name)})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", s.t.Name, err)
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

// KeyTooLongError is a key value past DynamoDB's limit (see ddb).
type KeyTooLongError = ddb.KeyTooLongError

// DynamoDB's limits on key attribute values, in bytes.
const (
	MaxPartitionKeyBytes = ddb.MaxPartitionKeyBytes
	MaxSortKeyBytes      = ddb.MaxSortKeyBytes
)

// SetClient replaces the store's client, for tools that instrument every
// call (the Lambda event replay records them).
func (s *Store) SetClient(db *dynamodb.Client) { s.t.DB = db }

// CompanyPK is the partition of everything a company owns.
func CompanyPK(companyID int64) string { return schema.CompanyPK(companyID) }

// How a change's author was authenticated.
const (
	ViaAPIKey   = ledger.ViaAPIKey
	ViaBearer   = ledger.ViaBearer
	ViaOperator = ledger.ViaOperator
)

// The audit log's and the outbox's types (see ledger and schema).
type (
	AuditActor = ledger.AuditActor
	AuditEntry = ledger.AuditEntry
	Change     = ledger.Change
	Event      = schema.Event
	EventItem  = schema.EventItem
)

// Secret is what a changed secret's before and after read in the audit log.
const Secret = ledger.Secret

// DefaultAuditRetention is how long audit entries are kept unless
// WithAuditRetention says otherwise.
const DefaultAuditRetention = ledger.DefaultAuditRetention

// EventEntity marks outbox items; the dispatcher's stream filter selects
// new items carrying it.
const EventEntity = schema.EventEntity

// WithAuditActor returns ctx whose administrative writes are recorded in
// the audit log as made by a (see ledger.WithAuditActor).
func WithAuditActor(ctx context.Context, a AuditActor) context.Context {
	return ledger.WithAuditActor(ctx, a)
}

// AuditActorFrom returns the actor WithAuditActor put in ctx.
func AuditActorFrom(ctx context.Context) (AuditActor, bool) { return ledger.AuditActorFrom(ctx) }

// DecodeEventImage returns the event of a stream record's new image, and
// false when the image is not an outbox item.
func DecodeEventImage(image map[string]types.AttributeValue) (Event, bool, error) {
	return schema.DecodeEventImage(image)
}

// Audit records e on its own: for administrative actions that change no
// stored item of their own (a webhook test, a redelivery). Nothing is
// written when ctx carries no actor.
func (s *Store) Audit(ctx context.Context, companyID int64, e AuditEntry) error {
	return s.l.Audit(ctx, companyID, e)
}

// RecordEvent records an event on its own, for producers whose state change
// is not a store write (a scheduled check, a digest).
func (s *Store) RecordEvent(ctx context.Context, e Event) error { return s.l.RecordEvent(ctx, e) }

// RecordEventOnce records e unless an event with its id was ever recorded
// (see ledger.RecordEventOnce); it reports whether the event was new.
func (s *Store) RecordEventOnce(ctx context.Context, e Event) (bool, error) {
	return s.l.RecordEventOnce(ctx, e)
}
