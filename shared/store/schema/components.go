package schema

import (
	"fmt"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// The component inventory (store/components). A branch's components, as
// one engine's uploads list them, live in one partition per project and
// branch (ComponentSetPK), sorted by engine then package URL, beside one
// head item per engine (the last scan that wrote the set). Each component
// carries the package index keys on GSI1: the package without version
// (ComponentPackagePK), sorted by version, project, branch and engine, so
// "who holds this package" reads the package's holders only. Per package a
// version directory (one counter item per version) and a project
// directory (one counter item per project) hold the company-wide counts.

// ComponentSetPK is the partition of one project branch's components.
func ComponentSetPK(companyID, projectID int64, branch string) string {
	return fmt.Sprintf("%s#CSET#%012d#%s", CompanyPK(companyID), projectID, BranchHash(branch))
}

// ComponentHeadPrefix starts a set's head items' sort keys; engine names
// are lower case, so no component's sort key starts with it.
const ComponentHeadPrefix = "HEAD#"

// ComponentHeadKey is the head item of one engine's set on a branch.
func ComponentHeadKey(companyID, projectID int64, branch, engine string) ddb.Key {
	return ddb.Key{PK: ComponentSetPK(companyID, projectID, branch), SK: ComponentHeadPrefix + engine}
}

// ComponentSK is a component's sort key in its set.
func ComponentSK(engine, purl string) string { return engine + "#" + purl }

// ComponentPackagePK is the GSI1 partition of a package's holders.
func ComponentPackagePK(companyID int64, pkg string) string {
	return CompanyPK(companyID) + "#PKG#" + pkg
}

// ComponentPackageSK is a holder's GSI1 sort key: the version first, so
// one version's holders are a key range (ComponentVersionPrefix).
func ComponentPackageSK(version string, projectID int64, branch, engine string) string {
	return fmt.Sprintf("%s#%012d#%s#%s", version, projectID, BranchHash(branch), engine)
}

// ComponentVersionPrefix is the GSI1 sort key prefix of one version.
func ComponentVersionPrefix(version string) string { return version + "#" }

// ComponentVersionKey counts a package's holders at one version.
func ComponentVersionKey(companyID int64, pkg, version string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID) + "#PKGV#" + pkg, SK: version}
}

// ComponentProjectKey counts a package's holders in one project.
func ComponentProjectKey(companyID int64, pkg string, projectID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID) + "#PKGP#" + pkg, SK: fmt.Sprintf("%012d", projectID)}
}
