package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

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
	var items []schema.AuditItem
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
	p := Page{PKAttr: tabledef.PK, Partition: schema.AuditPK(companyID), Limit: int32(pr.Size), Token: pr.Token}
	switch {
	case f.Actor != "" && f.Action != "":
		p.Partition = schema.AuditBothPK(companyID, f.Actor, f.Action)
	case f.Actor != "":
		p.Index, p.PKAttr, p.Partition = tabledef.GSI1.Name, tabledef.GSI1.PK, schema.AuditActorPK(companyID, f.Actor)
	case f.Action != "":
		p.Index, p.PKAttr, p.Partition = tabledef.GSI2.Name, tabledef.GSI2.PK, schema.AuditActionPK(companyID, f.Action)
	}
	return p
}

// auditRange is the sort key range of the filter's time range.
func auditRange(f AuditFilter) skRange {
	r := digitKeys
	if !f.From.IsZero() {
		r.From = f.From.UTC().Format(schema.AuditTimeLayout)
	}
	if !f.To.IsZero() {
		r.To = f.To.UTC().Format(schema.AuditTimeLayout) + "#\U0010FFFF"
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
