// Package scanjournal holds a scan's journal: what the counters owe for
// the new issues a scan writes in bulk, written before the issues, paid
// while they are written, and settled by whoever holds the branch next
// when the writer gave up.
//
// A scan's new issues are written in bulk, not one transaction per
// handful of issues: their counter deltas are added up over the whole
// scan and written first as the scan's journal (see internal/journal:
// items of up to chunkSize counters' deltas, the trend moves, and the new
// issues themselves in brief), then a marker naming it, which the
// branch's head names too. Then the issues go out, many to a transaction,
// and the journal is paid, every transaction fenced by the lease
// (internal/lease). So each counter is written once per scan, however
// many issues it gains. Only the scan's lease holder creates issues on its
// branch and tool, so a retry within the same apply finds "the issues
// that do not exist yet" to be exactly the first attempt's unwritten
// ones, and finishes both. A journal whose writer gave up is settled
// (settle.go) by whoever takes the branch next, or by the scan's failure:
// what it paid for issues that were never written is taken back, so the
// counters equal the issues it wrote. A journal item holds many counters
// because every item written costs a stream record as well.
//
// The journal knows issues only in brief (Created) and moves counters
// through the area that owns them (Issues); the findings area writes the
// issues themselves.
package scanjournal

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/lease"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/trends"
)

// Created is a new issue in brief: what its counters and trend moves
// depend on.
type Created struct {
	ID        string
	ProjectID int64
	Branch    string
	CWE       int
	File      string
	Urgency   string
	Status    string
}

// Entry is what a journal owes one counter: its scope, dimension and
// group (from which its key is made again) and its deltas per cell.
type Entry struct {
	Project int64            `dynamodbav:"scope_project"`
	Branch  string           `dynamodbav:"scope_branch"`
	Dim     schema.Dimension `dynamodbav:"dim"`
	Group   string           `dynamodbav:"group"`
	Cells   map[string]int64 `dynamodbav:"cells"`
}

// Key is the key of the counter e moves.
func (e Entry) Key(companyID int64) ddb.Key {
	return schema.CounterKey(companyID, schema.Scope{ProjectID: e.Project, Branch: e.Branch}, e.Dim, e.Group)
}

// Moves are what creating issues moves: counters and trend records.
type Moves struct {
	Counters []Entry
	Trend    []trends.Move
}

// Issues is what the journal needs of the area that writes issues and
// owns their counters.
type Issues interface {
	// Moves are what creating issues (as at) moves.
	Moves(ctx context.Context, companyID int64, created []Created, at string) (Moves, error)
	// Written are the ids among ids whose issues exist as scanID's.
	Written(ctx context.Context, companyID int64, scanID string, ids []string) (map[string]bool, error)
	// CounterKeys are the keys of every counter the issues count in.
	CounterKeys(companyID int64, created []Created) []ddb.Key
	// TxPaySettled are the items that add entries to their counters
	// (keys, in their order) as read now, settling them for the counts
	// they make (index keys and scope summaries), conditional on the
	// counters still being as read.
	TxPaySettled(ctx context.Context, companyID int64, entries []Entry, keys []ddb.Key) ([]types.TransactWriteItem, error)
	// TxPayPlain are the items that add entries to their counters (keys)
	// with plain ADDs.
	TxPayPlain(entries []Entry, keys []ddb.Key) ([]types.TransactWriteItem, error)
	// SettleCounters settles the counters of keys after a write.
	SettleCounters(ctx context.Context, companyID int64, keys []ddb.Key) error
}

// Trends turns trend moves into their writes.
type Trends interface {
	TxMoves(companyID int64, moves []trends.Move) ([]types.TransactWriteItem, error)
}

// Journal writes, pays and settles scan journals.
type Journal struct {
	t      *ddb.Table
	issues Issues
	trends Trends
}

// New returns the journals of a table, over the issues' area and the
// trends.
func New(t *ddb.Table, issues Issues, tr Trends) *Journal {
	return &Journal{t: t, issues: issues, trends: tr}
}

// chunkSize is the most counters one journal item holds: with the item's
// own delete, the summaries of the three scopes of a scan's issues
// (company, project, branch) and the lease's fence, one transaction pays
// it. An entry is at most some 2.5 KB (a file path of norm.MaxPath bytes
// and a branch of 1,020), so an item stays under 250 KB, below DynamoDB's
// 400 KB.
const chunkSize = ddb.MaxTxItems - 4 - lease.FenceRoom

// retention is how long a scan journal's items live. A journal is settled
// within hours (the stalled sweep fails every upload nothing completed two
// hours after it was made, settling its journal), so its items expire, at
// no write cost: those a writer wrote before dying without naming them,
// and the brief, which is not deleted when the journal is paid.
const retention = 30 * 24 * time.Hour
