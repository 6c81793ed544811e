package store

import (
	"context"
	"time"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/scans"
)

// The scans area's types, constants and errors, for callers of the facade
// (see scans).
type (
	Scan         = scans.Scan
	ScanError    = scans.ScanError
	ScanQuery    = scans.ScanQuery
	ScanPage     = scans.ScanPage
	StalledScan  = scans.StalledScan
	UploadRun    = scans.UploadRun
	UploadChunk  = scans.UploadChunk
	UploadPart   = scans.UploadPart
	QuotaError   = scans.QuotaError
	CIData       = scans.CIData
	SourceBudget = scans.SourceBudget
)

// Scan statuses, as the real client classifies them.
const (
	ScanProcessing = scans.ScanProcessing
	ScanComplete   = scans.ScanComplete
	ScanIncomplete = scans.ScanIncomplete
)

var (
	// ErrInvalid is returned for a record the store refuses to write (see
	// ddb.ErrInvalid).
	ErrInvalid = ddb.ErrInvalid
	// ErrBudget is returned when a run has no room left for a source file.
	ErrBudget = scans.ErrBudget
)

// CanonicalUUID returns the lower-case hyphenated form of a uuid written
// in its 36-character form (any case), or false.
func CanonicalUUID(s string) (string, bool) { return schema.CanonicalUUID(s) }

// ScanFailedEvent is the scan_failed notification event of a scan that
// ends incomplete (see scans.ScanFailedEvent).
func ScanFailedEvent(sc Scan, projectName, reason string, at time.Time) (*Event, error) {
	return scans.ScanFailedEvent(sc, projectName, reason, at)
}

// FailScan ends a scan that is still processing as incomplete, settling
// first what its writers left owing the counters (see findings.FailScan).
func (s *Store) FailScan(ctx context.Context, companyID int64, scanID, reason string, problems []ScanError, ev *Event) (bool, error) {
	return s.Findings.FailScan(ctx, companyID, scanID, reason, problems, ev)
}
