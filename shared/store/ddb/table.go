// Package ddb is the table layer of the store: one table handle (client,
// name, clock) and what every area does with it — single-item reads and
// writes, queries, transactions, batches, the optimistic-concurrency retry
// loops, key limits and capacity metering. It knows keys and expressions,
// never what an item means.
package ddb

import (
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/tabledef"
)

// The store's sentinel errors; shared/store re-exports them for callers.
var (
	// ErrNotFound is returned when an item does not exist in the caller's scope.
	ErrNotFound = errors.New("not found")
	// ErrConflict is returned when a conditional write finds the item in
	// another state than expected (for example it already exists).
	ErrConflict = errors.New("conflict")
	// ErrUnavailable is returned when DynamoDB kept refusing a write past
	// the retry budget (throttling, transaction conflicts, timeouts, a
	// branch busy with another upload, a write that kept losing to
	// concurrent ones): the caller may try again later (503 with
	// Retry-After), and nothing half-done is left behind.
	ErrUnavailable = errors.New("unavailable")
	// ErrInvalid is returned for a record the store refuses to write (a
	// programming error of the caller, or input the handler should have
	// rejected).
	ErrInvalid = errors.New("invalid record")
)

// Key is a primary key.
type Key struct {
	PK string `dynamodbav:"PK"`
	SK string `dynamodbav:"SK"`
}

// AV is the key as DynamoDB takes it.
func (k Key) AV() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		tabledef.PK: &types.AttributeValueMemberS{Value: k.PK},
		tabledef.SK: &types.AttributeValueMemberS{Value: k.SK},
	}
}

// Table is one DynamoDB table and the clock its writes stamp items with.
type Table struct {
	DB   *dynamodb.Client
	Name string
	// Now is the clock (time.Now when nil); tests set it to control leases,
	// deadlines and stamps without sleeping.
	Now func() time.Time

	mu   sync.Mutex
	last time.Time // the latest Tick
}

// New returns a Table whose client refuses key values past DynamoDB's
// limits before sending them (KeyTooLongError).
func New(db *dynamodb.Client, name string) *Table {
	db = dynamodb.New(db.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, keyLimits)
	})
	return &Table{DB: db, Name: name}
}

// Clock returns the current time of the table's clock.
func (t *Table) Clock() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// Stamp is the clock in the API's date-time format.
func (t *Table) Stamp() string { return t.Clock().UTC().Format(time.RFC3339) }

// StampSortable is the clock as SortableTime.
func (t *Table) StampSortable() string { return SortableTime(t.Clock()) }

// Tick hands out strictly increasing times (microseconds), so entries
// written by one process (those of one transaction included) keep their
// order.
func (t *Table) Tick() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	at := t.Clock().UTC().Truncate(time.Microsecond)
	if !at.After(t.last) {
		at = t.last.Add(time.Microsecond)
	}
	t.last = at
	return at
}

// SortableTime formats t in UTC with a fixed width (microseconds), so
// times compare as strings in sort keys.
func SortableTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// IsConditionFailed reports whether err is a failed condition check, alone
// or inside a cancelled transaction.
func IsConditionFailed(err error) bool {
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

// ConditionFailedAt reports whether err is a cancelled transaction whose
// item i failed its condition.
func ConditionFailedAt(err error, i int) bool {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || i >= len(tce.CancellationReasons) {
		return false
	}
	return aws.ToString(tce.CancellationReasons[i].Code) == "ConditionalCheckFailed"
}

// IsTransactionConflict reports whether DynamoDB cancelled a transaction
// because another one touched its items at the same time (worth retrying).
func IsTransactionConflict(err error) bool {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return false
	}
	for _, r := range tce.CancellationReasons {
		if aws.ToString(r.Code) == "TransactionConflict" {
			return true
		}
	}
	return false
}
