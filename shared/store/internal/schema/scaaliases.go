package schema

import (
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
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
