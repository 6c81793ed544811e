package schema

import (
	"fmt"
	"strconv"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
)

// The keys of the SAST issues' group counters, scope summaries, group
// index partitions, due index and history (their items: store/findings).

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
