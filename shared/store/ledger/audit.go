// Package ledger holds the items other transactions join: the audit entry
// of an administrative change, the outbox event of a state change, and the
// company counters a create or delete moves.
package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// How a change's author was authenticated.
const (
	ViaAPIKey   = "api_key"
	ViaBearer   = "bearer"
	ViaOperator = "operator" // the operator command, outside the API
)

// Ledger writes the shared items of a table's transactions.
type Ledger struct {
	T *ddb.Table
	// Retention is how long audit entries live.
	Retention time.Duration
}

// AuditActor is who makes an administrative change: a user through one of their
// API keys or a bearer token, or the operator.
type AuditActor struct {
	UserID int64  `json:"user_id"`
	Via    string `json:"via"`
	KeyID  int64  `json:"key_id,omitempty"`
}

// ID is the actor's name in audit index keys and the audit log's actor
// filter: the user id, or "operator".
func (a AuditActor) ID() string {
	if a.Via == ViaOperator {
		return ViaOperator
	}
	return strconv.FormatInt(a.UserID, 10)
}

type actorKey struct{}

// WithAuditActor returns ctx whose administrative writes are recorded in the
// audit log as made by a. The auth layer sets it for every authenticated
// request, so store write paths need no extra parameter; writes made
// without an actor (the demo seed, benchmarks) record no entry.
func WithAuditActor(ctx context.Context, a AuditActor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// AuditActorFrom returns the actor WithAuditActor put in ctx.
func AuditActorFrom(ctx context.Context) (AuditActor, bool) {
	a, ok := ctx.Value(actorKey{}).(AuditActor)
	return a, ok
}

// Change is one field's value before and after a change (nil: absent).
// Secrets never appear here; a changed secret is recorded as "[changed]".
type Change struct {
	Before any `json:"before"`
	After  any `json:"after"`
}

// Secret is what a changed secret's before and after read in the audit log.
const Secret = "[changed]"

// AuditEntry describes one administrative change. Actor and time come from
// the context and the clock when it is written.
type AuditEntry struct {
	Action     string // "<target type>.<verb>", e.g. "api_key.revoke"
	TargetType string
	TargetID   string
	Changes    map[string]Change
}

// DefaultAuditRetention is how long audit entries are kept unless
// WithAuditRetention says otherwise.
const DefaultAuditRetention = 400 * 24 * time.Hour

// TxAudit returns the transaction items that record e for the actor in ctx,
// to be written in the same transaction as the change itself; none when ctx
// carries no actor.
func (l *Ledger) TxAudit(ctx context.Context, companyID int64, e AuditEntry) ([]types.TransactWriteItem, error) {
	a, ok := AuditActorFrom(ctx)
	if !ok {
		return nil, nil
	}
	changes, err := json.Marshal(e.Changes)
	if err != nil {
		return nil, fmt.Errorf("audit changes: %w", err)
	}
	at := l.T.Tick()
	retention := l.Retention
	// The id is derived from who did what to which target, not drawn at
	// random: with the time (strictly increasing in a process) it is
	// unique, and the same change made again stores the same items.
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d|%s|%d|%d|%s|%s|%s",
		companyID, a.Via, a.UserID, a.KeyID, e.Action, e.TargetType, e.TargetID)))
	id := hex.EncodeToString(sum[:8])
	sk := schema.AuditSK(at, id)
	it := schema.AuditItem{
		Key:    ddb.Key{PK: schema.AuditPK(companyID), SK: sk},
		GSI1PK: schema.AuditActorPK(companyID, a.ID()), GSI1SK: sk,
		GSI2PK: schema.AuditActionPK(companyID, e.Action), GSI2SK: sk,
		ID: id, CompanyID: companyID, At: at.Format(time.RFC3339Nano),
		ActorUserID: a.UserID, ActorVia: a.Via, ActorKeyID: a.KeyID,
		Action: e.Action, TargetType: e.TargetType, TargetID: e.TargetID,
		Changes: string(changes), ExpiresAt: at.Add(retention).Unix(),
	}
	main, err := l.T.TxPutNew(it)
	if err != nil {
		return nil, err
	}
	both := it
	both.Key = ddb.Key{PK: schema.AuditBothPK(companyID, a.ID(), e.Action), SK: sk}
	both.GSI1PK, both.GSI1SK, both.GSI2PK, both.GSI2SK = "", "", "", ""
	copyItem, err := l.T.TxPutNew(both)
	if err != nil {
		return nil, err
	}
	return []types.TransactWriteItem{main, copyItem}, nil
}

// Audit records e on its own: for administrative actions that change no
// stored item of their own (a webhook test, a redelivery). Nothing is
// written when ctx carries no actor.
func (l *Ledger) Audit(ctx context.Context, companyID int64, e AuditEntry) error {
	items, err := l.TxAudit(ctx, companyID, e)
	if err != nil || len(items) == 0 {
		return err
	}
	return l.T.Transact(ctx, items)
}

// Nullable is an optional text as a Change records it: null when empty.
func Nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
