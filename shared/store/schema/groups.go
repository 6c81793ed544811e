package schema

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/tabledef"
)

// The keys of the SAST issues' group counters, scope summaries, group
// index partitions, due index and history, and the counter and summary
// items (their writes: store/findings).

// Dimension is what issues are grouped by.
type Dimension string

// The two dimensions of GET /issues/groups.
const (
	ByCWE  Dimension = "cwe"
	ByFile Dimension = "file_path"
)

// Scope is a set of issues counted together: the whole company (zero
// value), one project (ProjectID), or one branch of a project (ProjectID and
// Branch).
type Scope struct {
	ProjectID int64
	Branch    string
}

// ScopeID names a scope in its summary's and counters' keys.
func ScopeID(sc Scope) string {
	switch {
	case sc.ProjectID == 0:
		return "C"
	case sc.Branch == "":
		return fmt.Sprintf("P%012d", sc.ProjectID)
	}
	return fmt.Sprintf("P%012dB%s", sc.ProjectID, BranchHash(sc.Branch))
}

// GroupSortKey orders groups of equal count: CWE number ascending (NoCWE
// first), file path ascending (byte order; paths too long for a key are
// cut and completed by their hash).
func GroupSortKey(dim Dimension, group string) string {
	if dim == ByCWE {
		n, _ := strconv.Atoi(group)
		return fmt.Sprintf("%07d", n)
	}
	if len(group) > 900 {
		return group[:900] + "#" + PathHash(group)
	}
	return group
}

// CounterKey is the key of one group's counter in a scope.
func CounterKey(companyID int64, sc Scope, dim Dimension, group string) ddb.Key {
	g := GroupSortKey(dim, group)
	if dim == ByFile {
		g = PathHash(group)
	}
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("GRP#%s#%s#%s", dim, ScopeID(sc), g)}
}

// CounterIndexPK is the index partition of a scope's counters of one
// dimension, sorted by count.
func CounterIndexPK(companyID int64, sc Scope, dim Dimension) string {
	return fmt.Sprintf("%s#GRP#%s#%s", CompanyPK(companyID), dim, ScopeID(sc))
}

// SummaryKey is the key of a scope's summary.
func SummaryKey(companyID int64, sc Scope) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "SCOPE#" + ScopeID(sc)}
}

// BranchIndexPK is the index partition of a branch's scope summaries
// (across projects).
func BranchIndexPK(companyID int64, branch string) string {
	return CompanyPK(companyID) + "#BRANCH#" + BranchHash(branch)
}

// PathHash stands for a file path in keys.
func PathHash(path string) string { return ShortHash(path, 32) }

// IssueGroupPK is the index partition of one group's issues.
func IssueGroupPK(companyID int64, dim Dimension, group string) string {
	if dim == ByFile {
		group = PathHash(group)
	}
	return fmt.Sprintf("%s#ISSUES#%s#%s", CompanyPK(companyID), dim, group)
}

// DuePK is the due index partition of a company's open issues of one
// urgency and SLA state.
func DuePK(companyID int64, urgency, state string) string {
	return fmt.Sprintf("%s#DUE#%s#%s", CompanyPK(companyID), urgency, state)
}

// An issue's history is a partition of its own, in time order.
func HistoryPK(companyID int64, issueID string) string {
	return fmt.Sprintf("%s#IHIST#%s", CompanyPK(companyID), issueID)
}

// HistorySK is the sort key of an issue's history entry: the time, the
// version the change writes, then seq (entries of one transaction).
func HistorySK(at string, version int64, seq int) string {
	return fmt.Sprintf("%s#%010d#%04d", at, version, seq)
}

// IssueScopePrefix is the part of an issue's index sort key that a scope
// covers: everything for the company, then project, then branch.
func IssueScopePrefix(sc Scope) string {
	switch {
	case sc.ProjectID == 0:
		return ""
	case sc.Branch == "":
		return fmt.Sprintf("P%012d#", sc.ProjectID)
	}
	return fmt.Sprintf("P%012d#%s#", sc.ProjectID, BranchHash(sc.Branch))
}

// IssueIndexSK is an issue's sort key in its group indexes: its project
// and branch scope, then newest first.
func IssueIndexSK(projectID int64, branch string, createdMillis int64, id string) string {
	return IssueScopePrefix(Scope{ProjectID: projectID, Branch: branch}) + NewestFirst(createdMillis, id)
}

// CellKey names a cell of a counter: its issues of one urgency and status.
func CellKey(urgency, status string) string { return urgency + "/" + status }

// Counter item attributes: its count, the count its index keys were set
// for, and a cell's prefix (n_<urgency>_<status>).
const (
	CounterCount   = "issue_count"
	CounterIndexed = "indexed_count"
	CellPrefix     = "n_"
)

// CellAttr is a cell's attribute on a counter item.
func CellAttr(cell string) string {
	u, st, _ := strings.Cut(cell, "/")
	return CellPrefix + u + "_" + st
}

// maxCount inverts counts so that ascending index keys are biggest first.
const maxCount = 9_999_999_999

// CounterIndexSK is a counter's index sort key at count.
func CounterIndexSK(dim Dimension, group string, count int64) string {
	return fmt.Sprintf("%010d#%s", maxCount-count, GroupSortKey(dim, group))
}

// CounterItem is a settled counter item holding cells (counts per cell,
// never empty), as the write path leaves it; the bulk loader writes it
// directly.
func CounterItem(companyID int64, sc Scope, dim Dimension, group string, cells map[string]int64) map[string]any {
	var count int64
	for _, n := range cells {
		count += n
	}
	item := map[string]any{
		tabledef.PK: CompanyPK(companyID), tabledef.SK: CounterKey(companyID, sc, dim, group).SK,
		tabledef.GSI1.PK: CounterIndexPK(companyID, sc, dim), tabledef.GSI1.SK: CounterIndexSK(dim, group, count),
		"dim": dim, "group": group, CounterCount: count, CounterIndexed: count,
		"scope_project": sc.ProjectID, "scope_branch": sc.Branch,
	}
	for c, n := range cells {
		item[CellAttr(c)] = n
	}
	return item
}

// ScopeSummary counts a scope's non-empty groups per dimension. A branch
// scope's summary is also indexed by branch (GSI2), so a branch filter finds
// the projects that have issues on it.
type ScopeSummary struct {
	ddb.Key
	GSI2PK     string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK     string `dynamodbav:"GSI2SK,omitempty"`
	ProjectID  int64  `dynamodbav:"project_id,omitempty"`
	Branch     string `dynamodbav:"branch,omitempty"`
	GroupsCWE  int64  `dynamodbav:"groups_cwe"`
	GroupsFile int64  `dynamodbav:"groups_file_path"`
}

// NewSummary is an empty scope summary with the attributes the write path
// sets on it.
func NewSummary(companyID int64, sc Scope) *ScopeSummary {
	sum := &ScopeSummary{Key: SummaryKey(companyID, sc), ProjectID: sc.ProjectID, Branch: sc.Branch}
	if sc.Branch != "" {
		sum.GSI2PK, sum.GSI2SK = BranchIndexPK(companyID, sc.Branch), ScopeID(sc)
	}
	return sum
}

// ScanJournalPK is the partition of a scan's counter journal (see
// findings' bulk create); CountJournalPK one of the counted writes' (see
// internal/counted), per scope of work (a scan, an SCA finding).
func ScanJournalPK(companyID int64, scanID string) string {
	return fmt.Sprintf("%s#JRNL#%s", CompanyPK(companyID), scanID)
}

func CountJournalPK(companyID int64, scope string) string {
	return fmt.Sprintf("%s#CJ#%s", CompanyPK(companyID), scope)
}

// CounterPrefix begins the sort key of every counter of a scope in one
// dimension (CounterKey).
func CounterPrefix(sc Scope, dim Dimension) string {
	return fmt.Sprintf("GRP#%s#%s#", dim, ScopeID(sc))
}

// BranchSummariesPrefix begins the sort key of the summaries of every
// branch scope of a project (SummaryKey).
func BranchSummariesPrefix(projectID int64) string {
	return "SCOPE#" + ScopeID(Scope{ProjectID: projectID}) + "B"
}

// DueProject is the project's part of a due index sort key, between the
// first detection and the issue id: "<time>#P<project>#<id>".
func DueProject(projectID int64) string { return fmt.Sprintf("#P%012d#", projectID) }

// AcceptedDuePK is the due index partition of a company's accepted risks
// (by the end of their acceptance, store/triage, acceptance.go).
func AcceptedDuePK(companyID int64) string { return CompanyPK(companyID) + "#DUE#ACCEPTED" }

// acceptedTime is the fixed-width UTC form of an end in AcceptedDueSK, so
// keys sort by time.
const acceptedTime = "2006-01-02T15:04:05Z"

// AcceptedDueSK is the due index sort key of an issue accepted until end.
func AcceptedDueSK(end time.Time, issueID string) string {
	return end.UTC().Format(acceptedTime) + "#" + issueID
}

// AcceptedDueBefore is the greatest AcceptedDueSK bound of the ends before
// t: "<t>#..." and every later end sort above it.
func AcceptedDueBefore(t time.Time) string { return t.UTC().Format(acceptedTime) + "#" }

// The sort keys of a scan's journal (ScanJournalPK, store/findings): one
// generation of moves has its counter chunks (ScanJournalChunkPrefix), its
// trend item (ScanJournalTrendSK) and its brief (ScanJournalBriefSK); each
// ends the generation with "#", so no generation's prefix takes in
// another's. The marker (ScanJournalDoneSK) sorts after every other item.
const ScanJournalDoneSK = "~DONE"

// ScanJournalChunkPrefix begins the sort keys of a generation's counter
// chunks.
func ScanJournalChunkPrefix(gen string) string { return "C#" + gen + "#" }

// ScanJournalTrendSK is a generation's trend item.
func ScanJournalTrendSK(gen string) string { return "T#" + gen + "#" }

// ScanJournalBriefPrefix begins the sort keys of a generation's brief.
func ScanJournalBriefPrefix(gen string) string { return "N#" + gen + "#" }

// ScanJournalBriefSK is the n-th item of a generation's brief.
func ScanJournalBriefSK(gen string, n int) string {
	return fmt.Sprintf("%s%06d", ScanJournalBriefPrefix(gen), n)
}
