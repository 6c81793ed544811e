package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// issueSpace is the namespace of issue ids (name-based SHA-1 uuids).
var issueSpace = uuid.MustParse("0b9d7c52-6a3e-4d1f-8c2b-5e4f3a2d1c0b")

// IssueID is the identity of a finding: the same company, project, branch,
// tool and fingerprint always name the same issue, whichever scan reports
// it.
func IssueID(companyID, projectID int64, branch, tool, fingerprint string) string {
	return uuid.NewSHA1(issueSpace, fmt.Appendf(nil, "%d\x00%d\x00%s\x00%s\x00%s", companyID, projectID, branch, tool, fingerprint)).String()
}

// IssueKey is an issue's key. Issues live in 256 partitions per company,
// picked by the first two hex digits of their uuid: a tenant's million
// issues never form one hot item collection.
func IssueKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: IssueShardPK(companyID, id[:2]), SK: issueSKPrefix + id}
}

// issueSKPrefix starts an issue's sort key.
const issueSKPrefix = "ISSUE#"

// IssueKeyID is the id of the issue at k (IssueKey's inverse); false when
// k is no issue's.
func IssueKeyID(k ddb.Key) (string, bool) { return strings.CutPrefix(k.SK, issueSKPrefix) }

// IssueShardPK is one of a company's issue partitions.
func IssueShardPK(companyID int64, shard string) string {
	return CompanyPK(companyID) + "#ISSUES#" + shard
}

// ShortHash is a fixed-width, key-safe stand-in for free text (branch
// names and paths may hold '#' and be long); n hex digits.
func ShortHash(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

// BranchHash stands for a branch name in keys.
func BranchHash(branch string) string { return ShortHash(branch, 16) }

// HeadKey is the head item of one tool on one branch of a project: the
// last scan applied there, and the lease of the one being applied.
func HeadKey(companyID, projectID int64, branch, tool string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: ProjectHeadsPrefix(projectID) + BranchHash(branch) + "#" + ShortHash(tool, 16)}
}

// ProjectHeadsPrefix begins the sort key of every head of a project (of
// every branch, tool and category).
func ProjectHeadsPrefix(projectID int64) string { return fmt.Sprintf("HEAD#%012d#", projectID) }

// MemberPK is the partition of a scan's membership items (the ids of the
// issues it reported, in chunks whose sort keys start MemberChunkPrefix).
func MemberPK(companyID int64, scanID string) string {
	return fmt.Sprintf("%s#SCANISSUES#%s", CompanyPK(companyID), scanID)
}

// MemberChunkPrefix starts the sort key of every membership item.
const MemberChunkPrefix = "C#"
