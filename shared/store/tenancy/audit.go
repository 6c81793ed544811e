package tenancy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// AuditRecord is a stored audit log entry.
type AuditRecord struct {
	ID         string
	At         string
	Actor      ledger.AuditActor
	Action     string
	TargetType string
	TargetID   string
	Changes    map[string]ledger.Change
}

// AuditFilter selects audit entries; zero values select everything.
type AuditFilter struct {
	Actor    string // a user id or "operator"
	Action   string
	From, To time.Time
}

// ListAudit returns one page of a company's entries, newest first
// (uncounted). Every filter combination is one Query of one partition.
func (s *Tenancy) ListAudit(ctx context.Context, companyID int64, f AuditFilter, q page.Request) (page.Page[AuditRecord], error) {
	items, err := page.ReadPage[schema.AuditItem](ctx, s.t, auditList(companyID, f), q)
	if err != nil {
		return page.Page[AuditRecord]{}, err
	}
	out := make([]AuditRecord, 0, len(items.Items))
	for _, it := range items.Items {
		r := AuditRecord{
			ID: it.ID, At: it.At, Actor: ledger.AuditActor{UserID: it.ActorUserID, Via: it.ActorVia, KeyID: it.ActorKeyID},
			Action: it.Action, TargetType: it.TargetType, TargetID: it.TargetID,
		}
		if err := json.Unmarshal([]byte(it.Changes), &r.Changes); err != nil {
			return page.Page[AuditRecord]{}, fmt.Errorf("audit entry %s: %w", it.ID, err)
		}
		out = append(out, r)
	}
	return page.Page[AuditRecord]{Items: out, Offset: items.Offset, Next: items.Next}, nil
}

// auditList is the partition of the filter's actor and action, inside the
// sort key range of its time range.
func auditList(companyID int64, f AuditFilter) page.List {
	l := page.List{Partition: schema.AuditPK(companyID)}
	switch {
	case f.Actor != "" && f.Action != "":
		l.Partition = schema.AuditBothPK(companyID, f.Actor, f.Action)
	case f.Actor != "":
		l.Index, l.Partition = tabledef.GSI1, schema.AuditActorPK(companyID, f.Actor)
	case f.Action != "":
		l.Index, l.Partition = tabledef.GSI2, schema.AuditActionPK(companyID, f.Action)
	}
	l.Range = page.Digits
	if !f.From.IsZero() {
		l.Range.From = f.From.UTC().Format(schema.AuditTimeLayout)
	}
	if !f.To.IsZero() {
		l.Range.To = schema.AuditSKUpTo(f.To)
	}
	return l
}
