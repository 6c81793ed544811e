package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/tabledef"
)

// How a change's author was authenticated.
const (
	ViaAPIKey   = "api_key"
	ViaBearer   = "bearer"
	ViaOperator = "operator" // the operator command, outside the API
)

// AuditActor is who makes an administrative change: a user through one of their
// API keys or a bearer token, or the operator.
type AuditActor struct {
	UserID int64  `json:"user_id"`
	Via    string `json:"via"`
	KeyID  int64  `json:"key_id,omitempty"`
}

// id is the actor's name in audit index keys and the audit log's actor
// filter: the user id, or "operator".
func (a AuditActor) id() string {
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

// AuditRecord is a stored audit log entry.
type AuditRecord struct {
	ID         string
	At         string
	Actor      AuditActor
	Action     string
	TargetType string
	TargetID   string
	Changes    map[string]Change
}

// auditItem is an audit entry as stored: the company's log partition (its
// sort key is the time, then a random id: newest first by reading it
// backwards), with GSI1 serving the actor filter and GSI2 the action filter.
// A second copy under a partition per (actor, action) serves both filters
// at once. Both expire through the table's TTL.
type auditItem struct {
	Key
	GSI1PK      string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK      string `dynamodbav:"GSI1SK,omitempty"`
	GSI2PK      string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK      string `dynamodbav:"GSI2SK,omitempty"`
	ID          string `dynamodbav:"id"`
	CompanyID   int64  `dynamodbav:"company_id"`
	At          string `dynamodbav:"at"`
	ActorUserID int64  `dynamodbav:"actor_user_id"`
	ActorVia    string `dynamodbav:"actor_via"`
	ActorKeyID  int64  `dynamodbav:"actor_key_id,omitempty"`
	Action      string `dynamodbav:"action"`
	TargetType  string `dynamodbav:"target_type"`
	TargetID    string `dynamodbav:"target_id"`
	Changes     string `dynamodbav:"changes"` // JSON object of Change
	ExpiresAt   int64  `dynamodbav:"expires_at"`
}

// DefaultAuditRetention is how long audit entries are kept unless
// WithAuditRetention says otherwise.
const DefaultAuditRetention = 400 * 24 * time.Hour

// auditTimeLayout is fixed-width, so sort keys order by time.
const auditTimeLayout = "2006-01-02T15:04:05.000000Z"

func auditPK(companyID int64) string { return CompanyPK(companyID) + "#AUDIT" }

func auditActorPK(companyID int64, actor string) string {
	return auditPK(companyID) + "#ACTOR#" + actor
}

func auditActionPK(companyID int64, action string) string {
	return auditPK(companyID) + "#ACTION#" + action
}

func auditBothPK(companyID int64, actor, action string) string {
	return auditPK(companyID) + "#ACTOR#" + actor + "#ACTION#" + action
}

// txAudit returns the transaction items that record e for the actor in ctx,
// to be written in the same transaction as the change itself; none when ctx
// carries no actor.
func (s *Store) txAudit(ctx context.Context, companyID int64, e AuditEntry) ([]types.TransactWriteItem, error) {
	a, ok := AuditActorFrom(ctx)
	if !ok {
		return nil, nil
	}
	changes, err := json.Marshal(e.Changes)
	if err != nil {
		return nil, fmt.Errorf("audit changes: %w", err)
	}
	at := s.t.Tick()
	retention := s.auditRetention
	// The id is derived from who did what to which target, not drawn at
	// random: with the time (strictly increasing in a process) it is
	// unique, and the same change made again stores the same items.
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d|%s|%d|%d|%s|%s|%s",
		companyID, a.Via, a.UserID, a.KeyID, e.Action, e.TargetType, e.TargetID)))
	id := hex.EncodeToString(sum[:8])
	sk := at.Format(auditTimeLayout) + "#" + id
	it := auditItem{
		Key:    Key{PK: auditPK(companyID), SK: sk},
		GSI1PK: auditActorPK(companyID, a.id()), GSI1SK: sk,
		GSI2PK: auditActionPK(companyID, e.Action), GSI2SK: sk,
		ID: id, CompanyID: companyID, At: at.Format(time.RFC3339Nano),
		ActorUserID: a.UserID, ActorVia: a.Via, ActorKeyID: a.KeyID,
		Action: e.Action, TargetType: e.TargetType, TargetID: e.TargetID,
		Changes: string(changes), ExpiresAt: at.Add(retention).Unix(),
	}
	main, err := s.t.TxPutNew(it)
	if err != nil {
		return nil, err
	}
	both := it
	both.Key = Key{PK: auditBothPK(companyID, a.id(), e.Action), SK: sk}
	both.GSI1PK, both.GSI1SK, both.GSI2PK, both.GSI2SK = "", "", "", ""
	copyItem, err := s.t.TxPutNew(both)
	if err != nil {
		return nil, err
	}
	return []types.TransactWriteItem{main, copyItem}, nil
}

// Audit records e on its own: for administrative actions that change no
// stored item of their own (a webhook test, a redelivery). Nothing is
// written when ctx carries no actor.
func (s *Store) Audit(ctx context.Context, companyID int64, e AuditEntry) error {
	items, err := s.txAudit(ctx, companyID, e)
	if err != nil || len(items) == 0 {
		return err
	}
	return s.t.Transact(ctx, items)
}

// AuditFilter selects audit entries; zero values select everything.
type AuditFilter struct {
	Actor    string // a user id or "operator"
	Action   string
	From, To time.Time
}

// ListAudit returns one page of a company's entries, newest first, and the
// token of the next page ("" at the end). Every filter combination is one
// Query of one partition.
func (s *Store) ListAudit(ctx context.Context, companyID int64, f AuditFilter, pr PageRequest) ([]AuditRecord, string, error) {
	p := auditPage(companyID, f, pr)
	r := auditRange(f)
	view := listView("audit", p.Partition, r.From, r.To)
	var err error
	if p.Token, err = openToken(view, pr.Token); err != nil {
		return nil, "", err
	}
	var items []auditItem
	next, err := s.readPage(ctx, p, r, pr.Offset, &items)
	if err != nil {
		return nil, "", err
	}
	next = sealToken(view, next)
	out := make([]AuditRecord, 0, len(items))
	for _, it := range items {
		r := AuditRecord{
			ID: it.ID, At: it.At, Actor: AuditActor{UserID: it.ActorUserID, Via: it.ActorVia, KeyID: it.ActorKeyID},
			Action: it.Action, TargetType: it.TargetType, TargetID: it.TargetID,
		}
		if err := json.Unmarshal([]byte(it.Changes), &r.Changes); err != nil {
			return nil, "", fmt.Errorf("audit entry %s: %w", it.ID, err)
		}
		out = append(out, r)
	}
	return out, next, nil
}

func auditPage(companyID int64, f AuditFilter, pr PageRequest) Page {
	p := Page{PKAttr: tabledef.PK, Partition: auditPK(companyID), Limit: int32(pr.Size), Token: pr.Token}
	switch {
	case f.Actor != "" && f.Action != "":
		p.Partition = auditBothPK(companyID, f.Actor, f.Action)
	case f.Actor != "":
		p.Index, p.PKAttr, p.Partition = tabledef.GSI1.Name, tabledef.GSI1.PK, auditActorPK(companyID, f.Actor)
	case f.Action != "":
		p.Index, p.PKAttr, p.Partition = tabledef.GSI2.Name, tabledef.GSI2.PK, auditActionPK(companyID, f.Action)
	}
	return p
}

// auditRange is the sort key range of the filter's time range.
func auditRange(f AuditFilter) skRange {
	r := digitKeys
	if !f.From.IsZero() {
		r.From = f.From.UTC().Format(auditTimeLayout)
	}
	if !f.To.IsZero() {
		r.To = f.To.UTC().Format(auditTimeLayout) + "#\U0010FFFF"
	}
	return r
}

// skRange is an inclusive sort key range.
type skRange struct{ From, To string }

func (p Page) skAttr() string {
	switch p.Index {
	case tabledef.GSI1.Name:
		return tabledef.GSI1.SK
	case tabledef.GSI2.Name:
		return tabledef.GSI2.SK
	}
	return tabledef.SK
}

func (p Page) keyCondition(r skRange) expression.KeyConditionBuilder {
	return expression.Key(p.PKAttr).Equal(expression.Value(p.Partition)).
		And(expression.Key(p.skAttr()).Between(expression.Value(r.From), expression.Value(r.To)))
}
