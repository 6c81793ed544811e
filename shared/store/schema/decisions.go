package schema

import (
	"fmt"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// DecisionPK is the partition of a project's triage decisions (one item
// per finding identity, see store/decisions).
func DecisionPK(companyID, projectID int64) string {
	return fmt.Sprintf("%s#DECISIONS#%012d", CompanyPK(companyID), projectID)
}

// DecisionToolPrefix starts the sort key of every decision of one tool.
func DecisionToolPrefix(tool string) string { return "D#" + ShortHash(tool, 16) + "#" }

// DecisionKey is the decision item of a finding identity (tool and
// fingerprint) within a project; fingerprints are hashed, as they may be
// long and hold any character.
func DecisionKey(companyID, projectID int64, tool, fingerprint string) ddb.Key {
	return ddb.Key{PK: DecisionPK(companyID, projectID), SK: DecisionToolPrefix(tool) + ShortHash(fingerprint, 32)}
}
