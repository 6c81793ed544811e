package store

import (
	"encoding/json"
	"fmt"

	"github.com/acme/codescan-api/shared/store/exports"
)

// Export is an export job (see the exports area).
type Export = exports.Export

// ExportResult is what a finished export attempt records.
type ExportResult = exports.Result

// ExportEntity marks export items; the ingester's export stream filter selects new
// items carrying it.
const ExportEntity = exports.Entity

// EncodeIssueFilter is f as an export keeps it (its Query), so the worker
// reads exactly what the request resolved.
func EncodeIssueFilter(f IssueFilter) (string, error) {
	b, err := json.Marshal(f)
	return string(b), err
}

// DecodeIssueFilter reads an export's Query back.
func DecodeIssueFilter(s string) (IssueFilter, error) {
	var f IssueFilter
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		return f, fmt.Errorf("export query: %w", err)
	}
	return f, nil
}

// The states of an export.
const (
	ExportQueued  = exports.Queued
	ExportRunning = exports.Running
	ExportDone    = exports.Done
	ExportFailed  = exports.Failed
)
