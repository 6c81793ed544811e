// Package store is the single-table DynamoDB access layer. Every item a
// company owns lives under a partition key that starts with that company, so
// an id is only ever looked up inside the caller's company.
package store

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/baselines"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/components"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/exports"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/quality"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/store/tickets"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/store/triage"
)

// Store is the handles of the areas of one table, each a room of its own:
// a caller reaches an area through its field (st.Scans.GetScan) and names
// the area's own types; a group's composition (its StoreOf) shows which
// areas it touches, and holds the compositions of the shared parts it runs
// (scanlife.IngestingOf(st), sweep.StoreOf(st)) rather than restating
// their calls.
type Store struct {
	t          *ddb.Table
	Ledger     *ledger.Ledger
	Exports    *exports.Exports
	Exploits   *exploits.Exploits
	Baselines  *baselines.Baselines
	Trends     *trends.Trends
	Tenancy    *tenancy.Tenancy
	Catalog    *catalog.Catalog
	Deliveries *delivery.Deliveries
	Scans      *scans.Scans
	Findings   *findings.Findings
	Lists      *issuelists.Lists
	Triage     *triage.Triage
	SCA        *sca.SCA
	Quality    *quality.Quality
	Components *components.Components
	Tickets    *tickets.Tickets
}

// Option configures a Store.
type Option func(*Store)

// WithAuditRetention sets how long audit entries live
// (ledger.DefaultAuditRetention when zero or unset).
func WithAuditRetention(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.Ledger.Retention = d
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
	s := &Store{t: t, Ledger: &ledger.Ledger{T: t, Retention: ledger.DefaultAuditRetention}, Exploits: exploits.New(t), Components: components.New(t), Baselines: baselines.New(t), Trends: trends.New(t)}
	s.Exports = exports.New(s.t, s.Ledger)
	s.Tenancy = tenancy.New(s.t, s.Ledger)
	s.Catalog = catalog.New(s.t, s.Ledger)
	s.Deliveries = delivery.New(s.t, s.Ledger)
	// The triage room is made before the areas that read its rules,
	// decisions and acceptances (their ports), then given them (Use).
	s.Triage = triage.New(s.t, s.Ledger)
	s.Scans = scans.New(s.t, s.Ledger, scans.Deps{Catalog: s.Catalog})
	s.Findings = findings.New(s.t, s.Ledger, findings.Deps{Completion: s.Scans,
		Trends: s.Trends, Decisions: s.Triage, Rules: s.Triage})
	s.Lists = issuelists.New(s.t, s.Findings, s.Scans, s.Catalog, s.Tenancy, s.Trends, s.Triage)
	s.SCA = sca.New(s.t, s.Ledger, sca.Deps{Exploits: s.Exploits, Rules: s.Triage})
	s.Triage.Use(s.Findings, s.Lists, s.SCA)
	s.Quality = quality.New(s.t, s.Ledger)
	s.Tickets = tickets.Over(s.t, s.Ledger)
	for _, o := range opts {
		o(s)
	}
	return s
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

// SetClient replaces the store's client, for tools that instrument every
// call (the Lambda event replay records them).
func (s *Store) SetClient(db *dynamodb.Client) { s.t.DB = db }
