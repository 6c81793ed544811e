package store

import (
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
)

// The findings area's types, constants and values, for callers of the
// facade (see findings).
type (
	Issue         = findings.Issue
	IssueDecision = findings.IssueDecision
	IssueFilter   = issuelists.IssueFilter
	Actor         = findings.Actor
	ScanHead      = findings.ScanHead
	ApplyResult   = findings.ApplyResult
	HistoryEntry  = findings.HistoryEntry
	TrendWindow   = issuelists.TrendWindow
	Dimension     = findings.Dimension
	Scope         = findings.Scope
	Cells         = findings.Cells
	GroupCount    = findings.GroupCount
)

// The dimensions issues are grouped by.
const (
	ByCWE  = findings.ByCWE
	ByFile = findings.ByFile
)

// Suppressed is the status of a finding the scanned code suppresses.
const Suppressed = findings.Suppressed

// NoCWE is the CWE number stored for an issue that carries no CWE (see
// findings.NoCWE).
const NoCWE = findings.NoCWE

var (
	// Urgencies are the issue urgency codes, most urgent first.
	Urgencies = findings.Urgencies
	// Statuses are the issue statuses.
	Statuses = findings.Statuses
	// ManualStatuses are the statuses people give issues.
	ManualStatuses = findings.ManualStatuses
)

// IssueID is the identity of a finding (see findings.IssueID).
func IssueID(companyID, projectID int64, branch, tool, fingerprint string) string {
	return findings.IssueID(companyID, projectID, branch, tool, fingerprint)
}

// SortGroups sorts groups in the order of GET /issues/groups (see
// issuelists.SortGroups).
func SortGroups(groups []GroupCount) { issuelists.SortGroups(groups) }
