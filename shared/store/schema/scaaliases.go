package schema

import (
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// SCA correlation (store/sca correlate.go): one SCA finding per
// vulnerable package and advisory on a project's branch, whichever
// scanners report it. Each advisory id a finding answers to (OSV, GO-,
// GHSA, CVE: the report's ids and aliases) has an alias item naming the
// finding, in one partition per project branch (SCAAliasPK), sorted by
// the package (ecosystem, name and version, hashed) then the advisory id
// (upper case: GHSA ids come in either case).

// SCAAliasPK is the partition of a project branch's SCA alias items.
func SCAAliasPK(companyID, projectID int64, branch string) string {
	return fmt.Sprintf("%s#SCAALIAS#%012d#%s", CompanyPK(companyID), projectID, BranchHash(branch))
}

// SCAAliasKey is the alias item of one advisory id of a package version
// on a project branch.
func SCAAliasKey(companyID, projectID int64, branch, ecosystem, name, version, advisory string) ddb.Key {
	pkg := ShortHash(strings.ToLower(ecosystem)+"\x00"+name+"\x00"+version, 24)
	return ddb.Key{PK: SCAAliasPK(companyID, projectID, branch), SK: pkg + "#" + strings.ToUpper(strings.TrimSpace(advisory))}
}

// The SCA findings' keys (store/sca): each finding in its company's
// partition under SCAIssueSKPrefix; listed by id on the company's GSI2
// partition (SCACompanyPK), a project's GSI1 partition (SCAProjectPK) and
// a scan's membership partition (SCAMemberPK); counted under SCACount and
// SCAScanCount.

// SCAIssueSKPrefix begins the sort key of every SCA finding.
const SCAIssueSKPrefix = "SCA#"

// SCAIssueSK is an SCA finding's sort key.
func SCAIssueSK(id string) string { return SCAIssueSKPrefix + id }

// SCAIssueKey is an SCA finding's key.
func SCAIssueKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: SCAIssueSK(id)}
}

// SCAMemberPK is the partition of a scan's SCA membership items.
func SCAMemberPK(companyID int64, scanID string) string {
	return fmt.Sprintf("%s#SCANSCA#%s", CompanyPK(companyID), scanID)
}

// SCACompanyPK is the index partition of a company's SCA findings.
func SCACompanyPK(companyID int64) string { return CompanyPK(companyID) + "#SCA" }

// SCAProjectPK is the index partition of a project's SCA findings.
func SCAProjectPK(companyID, projectID int64) string {
	return fmt.Sprintf("%s#SCAP#%d", CompanyPK(companyID), projectID)
}

// SCACount is the counted collection of the company's SCA findings
// (projectID 0) or a project's.
func SCACount(projectID int64) string {
	if projectID == 0 {
		return "SCA"
	}
	return fmt.Sprintf("SCA#P%012d", projectID)
}

// SCAScanCount is the counted collection of a scan's SCA findings.
func SCAScanCount(scanID string) string { return "SCANSCA#" + scanID }
