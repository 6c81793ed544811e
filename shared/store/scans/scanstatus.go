package scans

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// FailScan ends a scan that is still ScanProcessing as ScanIncomplete with
// why (the client prints failed_reason) and its problems (scan_errors),
// recording the notification event ev (scan_failed) in the same
// transaction when it is given. It is conditional on the scan still
// processing, so a redelivered failure, or one that loses the race against
// a completing attempt, changes nothing and records no event; it reports
// whether it changed the scan. sc is the scan as its caller read it
// (scanlife.Fail settles its counters first).
func (x *Scans) FailScan(ctx context.Context, sc Scan, reason string, problems []ScanError, ev *schema.Event) (bool, error) {
	upd := expression.Set(expression.Name("status"), expression.Value(ScanIncomplete)).
		Set(expression.Name("failed_reason"), expression.Value(reason)).
		Set(expression.Name("completed_at"), expression.Value(x.t.Stamp()))
	if len(problems) > 0 {
		upd = upd.Set(expression.Name("scan_errors"), expression.Value(problems))
	}
	processing := expression.AttributeExists(expression.Name(tabledef.PK)).
		And(expression.Name("status").Equal(expression.Value(ScanProcessing)))
	scan, err := x.t.TxUpdate(Key(sc.CompanyID, sc.ID), upd, &processing)
	if err != nil {
		return false, err
	}
	clear, err := TxClearProcessing(x.t, sc)
	if err != nil {
		return false, err
	}
	items := append([]types.TransactWriteItem{scan}, clear...)
	if ev != nil {
		e, err := x.l.TxEvent(*ev)
		if err != nil {
			return false, err
		}
		items = append(items, e)
	}
	err = x.t.Transact(ctx, items)
	if errors.Is(err, ddb.ErrConflict) {
		return false, nil
	}
	return err == nil, err
}

// SettleCounted pays what the scan's counted writes (its quality and SCA
// findings, internal/counted) left owing the counters: what failing the
// scan does first (scanlife.Fail).
func (x *Scans) SettleCounted(ctx context.Context, companyID int64, scanID string) error {
	return counted.Settle(ctx, x.t, schema.CountJournalPK(companyID, scanID))
}

// ScanFailedEvent is the scan_failed notification event of a scan that
// ends incomplete for reason; its id names the scan, so failing it again
// records nothing new.
func ScanFailedEvent(sc Scan, projectName, reason string, at time.Time) (*schema.Event, error) {
	data, err := json.Marshal(map[string]any{
		"scan_id": sc.ID, "project_id": sc.ProjectID, "project_name": projectName, "branch": sc.Branch,
		"tool": sc.Tool, "failed_reason": reason,
	})
	if err != nil {
		return nil, err
	}
	return &schema.Event{ID: "scan_failed-" + sc.ID, CompanyID: sc.CompanyID, Type: "scan_failed", CreatedAt: at.UTC(), Data: data}, nil
}
