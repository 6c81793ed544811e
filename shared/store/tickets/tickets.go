// Package tickets is the store's area of tickets (docs/tickets.md): Jira
// Cloud integrations, ticket rules, the link item of every ticket opened
// on a tracker with the lease that keeps a retry from opening it twice,
// the look-ups of a link by the tracker's key and of an issue's links,
// and the memory of inbound ticket events. Administrative writes are
// audited in the same transaction.
package tickets

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Errors of the area.
var (
	// ErrLinkBusy: another attempt holds the link's lease.
	ErrLinkBusy = errors.New("another attempt on this ticket is in progress")
	// ErrReplay: the inbound event was seen before.
	ErrReplay = errors.New("event already received")
	// ErrLimit: a company holds the most items of a kind it may.
	ErrLimit = errors.New("limit reached")
)

// Bounds of a company's items.
const (
	MaxJiraIntegrations = 50
	MaxRules            = 100
	// MaxIssuesPerTicket bounds the findings one ticket lists (its link
	// item stays far below DynamoDB's item size).
	MaxIssuesPerTicket = 1000
)

// SCAPrefix marks an SCA finding's id among a link's issue ids (SCA
// findings are items of their own, store/sca): the issue filters
// (IssuesWithTickets) leave them out.
const SCAPrefix = "sca:"

// Tickets reads and writes the area's items of one table.
type Tickets struct {
	t *ddb.Table
	l *ledger.Ledger
}

// New returns the area on the store's table (its client and name) with
// the store's clock (time.Now when nil).
func New(db *dynamodb.Client, table string, now func() time.Time) *Tickets {
	t := ddb.New(db, table)
	t.Now = now
	return Over(t, &ledger.Ledger{T: t, Retention: ledger.DefaultAuditRetention})
}

// Over returns the area on a table and ledger the store's other areas
// share (its clock, client and audit retention with them).
func Over(t *ddb.Table, l *ledger.Ledger) *Tickets { return &Tickets{t: t, l: l} }

// Clock is the area's time.
func (s *Tickets) Clock() time.Time { return s.t.Clock() }

// audit is the transaction items of an administrative change.
func (s *Tickets) audit(ctx context.Context, companyID int64, action, target, id string, changes map[string]ledger.Change) ([]types.TransactWriteItem, error) {
	return s.l.TxAudit(ctx, companyID, ledger.AuditEntry{Action: action, TargetType: target, TargetID: id, Changes: changes})
}

// CanonicalUUID is s as a canonical uuid, if it is one.
func CanonicalUUID(s string) (string, bool) { return schema.CanonicalUUID(s) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
