package store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/tabledef"
)

// FailScan ends a scan that is still ScanProcessing as ScanIncomplete with
// why (the client prints failed_reason) and its problems (scan_errors),
// recording the notification event ev (scan_failed) in the same
// transaction when it is given. It is conditional on the scan still
// processing, so a redelivered failure, or one that loses the race against
// a completing attempt, changes nothing and records no event; it reports
// whether it changed the scan. An unknown scan is ErrNotFound.
func (s *Store) FailScan(ctx context.Context, companyID int64, scanID, reason string, problems []ScanError, ev *Event) (bool, error) {
	id, ok := CanonicalUUID(scanID)
	if !ok {
		return false, ErrNotFound
	}
	if _, err := s.GetScan(ctx, companyID, id); err != nil {
		return false, err
	}
	upd := expression.Set(expression.Name("status"), expression.Value(ScanIncomplete)).
		Set(expression.Name("failed_reason"), expression.Value(reason)).
		Set(expression.Name("completed_at"), expression.Value(now()))
	if len(problems) > 0 {
		upd = upd.Set(expression.Name("scan_errors"), expression.Value(problems))
	}
	processing := expression.AttributeExists(expression.Name(tabledef.PK)).
		And(expression.Name("status").Equal(expression.Value(ScanProcessing)))
	scan, err := s.txUpdate(scanKey(companyID, id), upd, &processing)
	if err != nil {
		return false, err
	}
	items := []types.TransactWriteItem{scan}
	if ev != nil {
		e, err := s.txEvent(*ev)
		if err != nil {
			return false, err
		}
		items = append(items, e)
	}
	err = s.transact(ctx, items)
	if errors.Is(err, ErrConflict) {
		return false, nil
	}
	return err == nil, err
}
