// Package store is the single-table DynamoDB access layer. Every item a
// company owns lives under a partition key that starts with that company, so
// an id is only ever looked up inside the caller's company.
package store

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/acceptances"
	"github.com/acme/codescan-api/shared/store/baselines"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/components"
	"github.com/acme/codescan-api/shared/store/decisions"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/exports"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/quality"
	"github.com/acme/codescan-api/shared/store/ruleapply"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/store/triageops"
	"github.com/acme/codescan-api/shared/store/triagerules"
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
	*exports.Exports
	*exploits.Exploits
	*acceptances.Acceptances
	*baselines.Baselines
	*decisions.Decisions
	*trends.Trends
	*tenancy.Tenancy
	*catalog.Catalog
	*delivery.Deliveries
	*triageops.TriageOps
	*triagerules.TriageRules
	*scans.Scans
	*findings.Findings
	*issuelists.Lists
	*triage.Triage
	*sca.SCA
	*quality.Quality
	*ruleapply.Applier
	// The component inventory (SBOMs and SCA package lists).
	*components.Components
}

// BaselineOpen is what a branch's latest complete scan has open (see
// baselines).
type BaselineOpen = baselines.Open

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
	s := &Store{t: t, l: &ledger.Ledger{T: t, Retention: DefaultAuditRetention}, Exploits: exploits.New(t), Components: components.New(t), Baselines: baselines.New(t), Trends: trends.New(t),
		Decisions: decisions.New(t), Acceptances: acceptances.New(t)}
	s.Exports = exports.New(s.t, s.l)
	s.Tenancy = tenancy.New(s.t, s.l)
	s.Catalog = catalog.New(s.t, s.l)
	s.Deliveries = delivery.New(s.t, s.l)
	s.TriageOps = triageops.New(s.t, s.l)
	s.TriageRules = triagerules.New(s.t, s.l)
	s.Scans = scans.New(s.t, s.l)
	s.Findings = findings.New(s.t, s.l, findings.Deps{Catalog: s.Catalog, Scans: s.Scans,
		Trends: s.Trends, Decisions: s.Decisions, Rules: s.TriageRules})
	s.Lists = issuelists.New(s.t, s.Findings, s.Scans, s.Catalog, s.Tenancy, s.Trends, s.Acceptances)
	s.Triage = triage.New(s.t, s.l, s.Findings, s.Lists, s.TriageOps, s.TriageRules, s.Decisions, s.Acceptances)
	s.SCA = sca.New(s.t, s.l, sca.Deps{Exploits: s.Exploits, Rules: s.TriageRules, Ops: s.TriageOps})
	s.Quality = quality.New(s.t, s.l)
	s.Applier = ruleapply.New(s.t, s.Triage, s.TriageRules, s.TriageOps, s.SCA)
	for _, o := range opts {
		o(s)
	}
	return s
}

// ApplyTriagePage applies the current id page of a bulk triage operation:
// the rule applications' (ruleapply), whose pages may hold SCA findings,
// over the triage area's.
func (s *Store) ApplyTriagePage(ctx context.Context, op TriageOp) (TriageOp, error) {
	return s.Applier.ApplyTriagePage(ctx, op)
}

// Client is the store's DynamoDB client (for tools and tests that read the
// table directly).
func (s *Store) Client() *dynamodb.Client { return s.t.DB }

// Clock is the time of the store's clock (see WithClock), for tools that
// write what the store would.
func (s *Store) Clock() time.Time { return s.t.Clock() }

// TableName is the store's table.
func (s *Store) TableName() string { return s.t.Name }

// StreamSpec is the table's stream: new images, which the dispatcher and
// the ingester read.
func StreamSpec() *types.StreamSpecification {
	return &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
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

// EventSK is the sort key of a company's outbox event (in CompanyPK).
func EventSK(id string) string { return schema.EventSK(id) }

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
