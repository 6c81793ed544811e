package store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// FailScan ends a scan that is still ScanProcessing as ScanIncomplete with
// why (the client prints failed_reason) and its problems (scan_errors). It
// is conditional on the scan still processing, so a redelivered failure, or
// one that loses the race against a completing attempt, changes nothing;
// it reports whether it changed the scan. An unknown scan is ErrNotFound.
func (s *Store) FailScan(ctx context.Context, companyID int64, scanID, reason string, problems []ScanError) (bool, error) {
	id, ok := CanonicalUUID(scanID)
	if !ok {
		return false, ErrNotFound
	}
	upd := expression.Set(expression.Name("status"), expression.Value(ScanIncomplete)).
		Set(expression.Name("failed_reason"), expression.Value(reason)).
		Set(expression.Name("completed_at"), expression.Value(now()))
	if len(problems) > 0 {
		upd = upd.Set(expression.Name("scan_errors"), expression.Value(problems))
	}
	processing := expression.Name("status").Equal(expression.Value(ScanProcessing))
	err := s.update(ctx, scanKey(companyID, id), upd, &processing, nil)
	if errors.Is(err, ErrConflict) {
		return false, nil
	}
	return err == nil, err
}
