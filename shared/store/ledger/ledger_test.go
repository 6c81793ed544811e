package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func newLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	tb := ddb.New(testenv.Table(t))
	return &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention}
}

func TestNextIDIsASequence(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	ctx := context.Background()
	for want := int64(1); want <= 3; want++ {
		got, err := l.NextID(ctx, "thing")
		if err != nil || got != want {
			t.Fatalf("NextID = %d, %v; want %d", got, err, want)
		}
	}
	if other, _ := l.NextID(ctx, "other"); other != 1 {
		t.Fatalf("sequences are independent: %d", other)
	}
	if last, err := l.LastID(ctx, "thing"); err != nil || last != 3 {
		t.Fatalf("LastID = %d, %v", last, err)
	}
	if last, err := l.LastID(ctx, "never"); err != nil || last != 0 {
		t.Fatalf("LastID of an unused sequence = %d, %v", last, err)
	}
}

// A company's own sequence starts above the highest id of its kind stored
// before it existed (numbered by a global sequence), and is the company's
// alone.
func TestNextCompanyIDStartsAboveOlderIDs(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	ctx := context.Background()
	type rec struct {
		ddb.Key
		ID int64 `dynamodbav:"id"`
	}
	for _, id := range []int64{3, 41} {
		if err := l.T.PutItem(ctx, rec{Key: ddb.Key{PK: schema.CompanyPK(1), SK: "WIDGET#" + time.Unix(id, 0).UTC().Format("150405")}, ID: id}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []int64{42, 43} {
		if got, err := l.NextCompanyID(ctx, 1, "widget", "WIDGET#"); err != nil || got != want {
			t.Fatalf("company 1: %d %v, want %d", got, err, want)
		}
	}
	if got, err := l.NextCompanyID(ctx, 2, "widget", "WIDGET#"); err != nil || got != 1 {
		t.Fatalf("company 2: %d %v, want 1", got, err)
	}
}

// An audit entry is written only for a change made by an actor, with its
// copy for the actor-and-action filter, the changes as JSON and an expiry
// of the ledger's retention; counters move by transaction items and read
// zero before their first move.
func TestAuditAndCounters(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	l.T.Now = func() time.Time { return at }
	ctx := context.Background()
	e := ledger.AuditEntry{Action: "team.create", TargetType: "team", TargetID: "7",
		Changes: map[string]ledger.Change{"name": {After: "Core"}, "secret": {Before: ledger.Secret, After: ledger.Secret}}}
	if err := l.Audit(ctx, 1, e); err != nil {
		t.Fatal(err)
	}
	var none []schema.AuditItem
	if err := l.T.QueryAllConsistent(ctx, ddb.PKBeginsWith(schema.AuditPK(1), ""), &none); err != nil || len(none) != 0 {
		t.Fatalf("an entry without an actor: %+v %v", none, err)
	}
	actor := ledger.AuditActor{Via: ledger.ViaAPIKey, UserID: 5, KeyID: 9}
	if err := l.Audit(ledger.WithAuditActor(ctx, actor), 1, e); err != nil {
		t.Fatal(err)
	}
	var main, both []schema.AuditItem
	if err := l.T.QueryAllConsistent(ctx, expression.Key("PK").Equal(expression.Value(schema.AuditPK(1))), &main); err != nil {
		t.Fatal(err)
	}
	if err := l.T.QueryAllConsistent(ctx, expression.Key("PK").Equal(expression.Value(schema.AuditBothPK(1, actor.ID(), "team.create"))), &both); err != nil {
		t.Fatal(err)
	}
	if len(main) != 1 || len(both) != 1 || main[0].ID != both[0].ID || main[0].ActorUserID != 5 || main[0].ActorKeyID != 9 ||
		main[0].GSI1PK != schema.AuditActorPK(1, actor.ID()) || main[0].GSI2PK != schema.AuditActionPK(1, "team.create") ||
		main[0].ExpiresAt != at.Add(ledger.DefaultAuditRetention).Unix() {
		t.Fatalf("entries %+v and %+v", main, both)
	}
	var changes map[string]ledger.Change
	if err := json.Unmarshal([]byte(main[0].Changes), &changes); err != nil || changes["name"].After != "Core" || changes["secret"].After != ledger.Secret {
		t.Fatalf("changes %s %v", main[0].Changes, err)
	}

	k := ddb.Key{PK: schema.CompanyPK(1), SK: "COUNT#widgets"}
	if n, err := l.CounterValue(ctx, k); err != nil || n != 0 {
		t.Fatalf("before the first move: %d %v", n, err)
	}
	for _, d := range []int64{3, -1} {
		add, err := l.TxAdd(k, d, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.T.Transact(ctx, []types.TransactWriteItem{add}); err != nil {
			t.Fatal(err)
		}
	}
	positive := expression.Name("count").GreaterThan(expression.Value(5))
	add, _ := l.TxAdd(k, -1, &positive)
	if err := l.T.Transact(ctx, []types.TransactWriteItem{add}); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("a move whose condition fails: %v", err)
	}
	if n, err := l.CounterValue(ctx, k); err != nil || n != 2 {
		t.Fatalf("after +3 -1: %d %v", n, err)
	}
}

// An event recorded once is recorded once however often it is raised.
func TestRecordEventOnce(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	ctx := context.Background()
	e := schema.Event{ID: "sla_breached-1", CompanyID: 1, Type: "sla_breached", Data: json.RawMessage(`{"n":1}`)}
	for n, want := range []bool{true, false} {
		if fresh, err := l.RecordEventOnce(ctx, e); err != nil || fresh != want {
			t.Fatalf("raise %d: %v %v", n+1, fresh, err)
		}
	}
	var it schema.EventItem
	if err := l.T.GetItemConsistent(ctx, schema.EventKey(1, e.ID), &it); err != nil || it.Entity != schema.EventEntity || it.Data != `{"n":1}` {
		t.Fatalf("outbox item %+v %v", it, err)
	}
	if err := l.RecordEvent(ctx, schema.Event{ID: "bad id", CompanyID: 1, Type: "x"}); err == nil {
		t.Fatal("an event id with a space was recorded")
	}
}
